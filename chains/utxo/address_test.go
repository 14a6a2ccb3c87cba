package utxo

import (
	"bytes"
	"strings"
	"testing"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/internal/addrtest"
)

// ticker returns a mainnet ticker of network bound to Family.
func ticker(network string) chains.Ticker {
	return chains.Ticker{Ticker: network, Network: network, Coin: network, Decimals: 8}.WithFamily(Family{})
}

func TestValidateAddressBTC(t *testing.T) {
	t.Parallel()
	const bech32Charset = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"
	cases := []addrtest.Case{
		{"P2PKH", "1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2", ""},
		{"P2SH", "3J98t1WpEZ73CNmQviecrnyiWrnqRhWNLy", ""},
		{"P2WPKH BIP173", "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4", ""},
		{"P2WPKH upper case BIP350", "BC1QW508D6QEJXTDG4Y5R3ZARVARY0C5XW7KV8F3T4", ""},
		{"P2WSH BIP173", "bc1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3qccfmv3", ""},
		{"P2TR BIP350", "bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqzk5jj0", ""},
		{"BIP84 derived", "bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu", ""},

		{"base58 bad checksum", "1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN3", "bad checksum"},
		{"base58 invalid character", "1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN0", "invalid character '0'"},
		{"base58 too short", "1BvBM", "too short"},
		{"base58 21-byte payload", addrtest.B58(0x00, append(addrtest.Hash20(), 1)), "wrong length"},
		{"testnet P2PKH", addrtest.B58(0x6f, addrtest.Hash20()), "testnet"},
		{"testnet P2SH", addrtest.B58(0xc4, addrtest.Hash20()), "testnet"},
		{"litecoin P2PKH", addrtest.B58(0x30, addrtest.Hash20()), "version byte 0x30"},
		{"bech32 bad checksum", addrtest.FlipLast("bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4", bech32Charset), "bad checksum"},
		{"bech32 mixed case", "bc1qW508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4", "mixes upper and lower case"},
		{"testnet P2WPKH BIP173", "tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx", "testnet"},
		{"regtest", addrtest.Segwit(t, "bcrt", 0, addrtest.Hash20(), false), "testnet"},
		{"litecoin segwit", "ltc1qjmxnz78nmc8nq77wuxh25n2es7rzm5c2rkk4wh", "not \"bc1\""},
		{"raw public key hex", "0279be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798", "invalid character '0'"},

		// BIP350 invalid segwit address vectors (mainnet and testnet).
		{"BIP350 invalid hrp", "tc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vq5zuyut", "not \"bc1\""},
		{"BIP350 v1 with bech32", "bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqh2y7hd", "uses bech32m"},
		{"BIP350 testnet v2 with bech32", "tb1z0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqglt7rf", "testnet"},
		{"BIP350 v16 with bech32", "BC1S0XLXVLHEMJA6C4DQV22UAPCTQUPFHLXM9H8Z3K2E72Q4K9HCZ7VQ54WELL", "uses bech32m"},
		{"BIP350 v0 with bech32m", "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kemeawh", "uses bech32, not bech32m"},
		{"BIP350 testnet v0 with bech32m", "tb1q0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vq24jc47", "testnet"},
		{"BIP350 invalid checksum character", "bc1p38j9r5y49hruaue7wxjce0updqjuyyx0kh56v8s25huc6995vvpql3jow4", "invalid character 'o'"},
		{"BIP350 witness version 17", "BC130XLXVLHEMJA6C4DQV22UAPCTQUPFHLXM9H8Z3K2E72Q4K9HCZ7VQ7ZWS8R", "invalid witness version 17"},
		{"BIP350 1-byte program", "bc1pw5dgrnzv", "wrong length"},
		{"BIP350 41-byte program", "bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7v8n0nx0muaewav253zgeav", "wrong length"},
		{"BIP350 v0 16-byte program", "BC1QR508D6QEJXTDG4Y5R3ZARVARYV98GJ9P", "want 20 or 32"},
		{"BIP350 mixed case", "tb1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vq47Zagq", "testnet"},
		{"BIP350 zero padding over 4 bits", "bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7v07qwwzcrf", "padding"},
		{"BIP350 non-zero padding", "tb1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vpggkg4j", "testnet"},
		{"BIP350 empty data", "bc1gmk9yu", "no witness version"},

		// Valid BIP350 encodings that ValidateAddress refuses by policy.
		{"BIP350 v1 40-byte program", "bc1pw508d6qejxtdg4y5r3zarvary0c5xw7kw508d6qejxtdg4y5r3zarvary0c5xw7kt5nd6y", "not a taproot output"},
		{"BIP350 v16", "BC1SW50QGDZ25J", "witness version 16 is not yet defined"},
		{"BIP350 v2", "bc1zw508d6qejxtdg4y5r3zarvaryvaxxpcs", "witness version 2 is not yet defined"},
		{"pay-to-anchor", addrtest.Segwit(t, "bc", 1, []byte{0x4e, 0x73}, true), "not a taproot output"},
	}
	addrtest.Run(t, ticker("btc"), cases)
}

func TestValidateAddressLTC(t *testing.T) {
	t.Parallel()
	addrtest.Run(t, ticker("ltc"), []addrtest.Case{
		{"L P2PKH", "LdP8Qox1VAhCzLJNqrr74YovaWYyNBUWvL", ""},
		{"M P2SH", addrtest.B58(0x32, addrtest.Hash20()), ""},
		{"legacy 3 P2SH", "3J98t1WpEZ73CNmQviecrnyiWrnqRhWNLy", ""},
		{"P2WPKH", "ltc1qjmxnz78nmc8nq77wuxh25n2es7rzm5c2rkk4wh", ""},
		{"P2WPKH upper case", strings.ToUpper("ltc1qjmxnz78nmc8nq77wuxh25n2es7rzm5c2rkk4wh"), ""},
		{"P2WSH", addrtest.Segwit(t, "ltc", 0, bytes.Repeat([]byte{7}, 32), false), ""},
		{"P2TR", "ltc1puht8rk95c53q3u9w3pf9h3jfcutcrl9lxc7rqsdthjrse4k6sn7q9tuqm9", ""},

		{"bad checksum", "LdP8Qox1VAhCzLJNqrr74YovaWYyNBUWvM", "bad checksum"},
		{"bech32 bad checksum", "ltc1qjmxnz78nmc8nq77wuxh25n2es7rzm5c2rkk4wj", "bad checksum"},
		{"bitcoin P2PKH", "1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2", "version byte 0x00 is not a ltc mainnet address"},
		{"bitcoin segwit", "bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu", "not \"ltc1\""},
		{"testnet P2PKH", addrtest.B58(0x6f, addrtest.Hash20()), "testnet"},
		{"testnet P2SH Q", addrtest.B58(0x3a, addrtest.Hash20()), "testnet"},
		{"testnet segwit", addrtest.Segwit(t, "tltc", 0, addrtest.Hash20(), false), "testnet"},
		{"wrong length", addrtest.B58(0x30, addrtest.Hash20()[:19]), "wrong length"},
		{"v0 with bech32m", addrtest.Segwit(t, "ltc", 0, addrtest.Hash20(), true), "uses bech32, not bech32m"},
		{"MWEB", "ltcmweb1qqv2g556ddyyqxvr25avn9vsepu75fnygr92pwxewl72ua26su57nsqu5r89cpckmja4m7mc3tm3jr", "MWEB"},
	})
}

func TestValidateAddressDOGE(t *testing.T) {
	t.Parallel()
	addrtest.Run(t, ticker("doge"), []addrtest.Case{
		{"P2PKH derived", "DBus3bamQjgJULBJtYXpEzDWQRwF5iwxgC", ""},
		{"P2PKH", "DH5yaieqoZN36fDVciNyRueRGvGLR3mr7L", ""},
		{"P2SH", addrtest.B58(0x16, addrtest.Hash20()), ""},

		{"bad checksum", "DBus3bamQjgJULBJtYXpEzDWQRwF5iwxgD", "bad checksum"},
		{"bitcoin P2PKH", "1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2", "version byte 0x00"},
		{"bitcoin P2SH", "3J98t1WpEZ73CNmQviecrnyiWrnqRhWNLy", "version byte 0x05"},
		{"testnet P2PKH", addrtest.B58(0x71, addrtest.Hash20()), "testnet"},
		{"wrong length", addrtest.B58(0x1e, append(addrtest.Hash20(), 0)), "wrong length"},
		{"segwit address", "bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu", "doge has no segwit addresses"},
	})
}

func TestValidateAddressBCH(t *testing.T) {
	t.Parallel()
	const cash = "bitcoincash:qpm2qsznhks23z7629mms6s4cwef74vcwvy22gdx6a"
	addrtest.Run(t, ticker("bch"), []addrtest.Case{
		{"CashAddr P2PKH", cash, ""},
		{"CashAddr P2SH", "bitcoincash:ppm2qsznhks23z7629mms6s4cwef74vcwvn0h829pq", ""},
		{"CashAddr without prefix", strings.TrimPrefix(cash, "bitcoincash:"), ""},
		{"CashAddr upper case", strings.ToUpper(cash), ""},
		{"CashAddr upper case without prefix", strings.ToUpper(strings.TrimPrefix(cash, "bitcoincash:")), ""},
		{"derived", "bitcoincash:qqyx49mu0kkn9ftfj6hje6g2wfer34yfnq5tahq3q6", ""},
		{"legacy P2PKH", "1BpEi6DfDAUFd7GtittLSdBeYJvcoaVggu", ""},
		{"legacy P2SH", "3CWFddi6m4ndiGyKqzYvsFYagqDLPVMTzC", ""},

		{"mixed case", "bitcoincash:qpm2qsznhks23z7629mms6s4cwef74vcwvy22gdx6A", "mixes upper and lower case"},
		{"mixed case prefix", "BitcoinCash:qpm2qsznhks23z7629mms6s4cwef74vcwvy22gdx6a", "mixes upper and lower case"},
		{"bad checksum", "bitcoincash:qpm2qsznhks23z7629mms6s4cwef74vcwvy22gdx6q", "bad checksum"},
		{"bad checksum without prefix", "qpm2qsznhks23z7629mms6s4cwef74vcwvy22gdx6q", "bad checksum"},
		{"testnet", "bchtest:pr6m7j9njldwwzlg9v7v53unlr4jkmx6eyvwc0uz5t", "testnet"},
		{"testnet without prefix", "qqyx49mu0kkn9ftfj6hje6g2wfer34yfnqseeszx8x", "testnet"},
		{"unknown prefix", "pref:pr6m7j9njldwwzlg9v7v53unlr4jkmx6ey65nvtks5", "unknown prefix"},
		{"double prefix", "bitcoincash:" + cash, "more than one"},
		{"empty prefix", ":qpm2qsznhks23z7629mms6s4cwef74vcwvy22gdx6a", "empty prefix"},
		{"invalid character", "bitcoincash:qpm2qsznhks23z7629mms6s4cwef74vcwvy22gdx6b", "invalid character 'b'"},
		{"spec checksum-only vector", "bitcoincash:qpzry9x8gf2tvdw0s3jn54khce6mua7lcw20ayyn", "wrong length: 19-byte hash"},
		{"256-bit P2PKH", "bitcoincash:qvch8mmxy0rtfrlarg7ucrxxfzds5pamg73h7370aa87d80gyhqxq5nlegake", "unsupported 256-bit hash"},
		{"P2SH32", "bitcoincash:pvhfadjrmc4adxl8payajshf34wauh4jlrfnpuyetfnzh5llrnh9w3q8y9qcp", "unsupported 256-bit hash"},
		{"token-aware type", mustCashAddr(t, "bitcoincash", 0x10, addrtest.Hash20()), "unsupported address type 2"},
		{"reserved bit", mustCashAddr(t, "bitcoincash", 0x80, addrtest.Hash20()), "reserved bit"},
		{"size bits disagree with length", mustCashAddr(t, "bitcoincash", 0x01, addrtest.Hash20()), "wrong length"},
		{"too short", "bitcoincash:qpm2qszn", "too short"},
		{"legacy testnet", addrtest.B58(0x6f, addrtest.Hash20()), "testnet"},
		{"legacy bad checksum", "1BpEi6DfDAUFd7GtittLSdBeYJvcoaVggv", "bad checksum"},
		{"bitcoin segwit", "bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu", "bch has no segwit addresses"},
	})
}

func mustCashAddr(t *testing.T, prefix string, version byte, hash []byte) string {
	t.Helper()
	s, err := cashAddrEncode(prefix, version, hash)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
