package chains

import (
	"bytes"
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/btcutil/base58"
	"github.com/btcsuite/btcd/btcutil/bech32"
)

// addrCase is one ValidateAddress row. An empty reason means the address
// must be accepted; otherwise the *AddressError's Reason must contain it.
type addrCase struct {
	name   string
	addr   string
	reason string
}

func runAddressCases(t *testing.T, ticker string, tests []addrCase) {
	t.Helper()
	tk, ok := DefaultRegistry().Lookup(ticker)
	if !ok {
		t.Fatalf("ticker %q not in the default registry", ticker)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := ValidateAddress(tk, tt.addr)
			if tt.reason == "" {
				if err != nil {
					t.Fatalf("ValidateAddress(%s, %q) = %v, want nil", ticker, tt.addr, err)
				}
				return
			}
			if !errors.Is(err, ErrInvalidAddress) {
				t.Fatalf("ValidateAddress(%s, %q) = %v, want ErrInvalidAddress", ticker, tt.addr, err)
			}
			var ae *AddressError
			if !errors.As(err, &ae) {
				t.Fatalf("error %v is not an *AddressError", err)
			}
			if ae.Ticker != tk.Ticker || ae.Address != tt.addr || !strings.Contains(ae.Reason, tt.reason) {
				t.Errorf("got %+v, want ticker %q, address %q, reason containing %q", ae, tk.Ticker, tt.addr, tt.reason)
			}
		})
	}
}

// b58 encodes a base58check string with the given version and payload.
func b58(version byte, payload []byte) string { return base58.CheckEncode(payload, version) }

// hash20 is an arbitrary non-zero 20-byte hash.
var hash20 = bytes.Repeat([]byte{0x5a}, 20)

// segwit encodes a segwit address with an explicit checksum variant, for
// building cases the spec vectors do not cover.
func segwit(t *testing.T, hrp string, version byte, program []byte, m bool) string {
	t.Helper()
	data, err := bech32.ConvertBits(program, 8, 5, true)
	if err != nil {
		t.Fatal(err)
	}
	data = append([]byte{version}, data...)
	var s string
	if m {
		s, err = bech32.EncodeM(hrp, data)
	} else {
		s, err = bech32.Encode(hrp, data)
	}
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// flipLast replaces the last character with another of the same alphabet.
func flipLast(s, alphabet string) string {
	last := s[len(s)-1]
	i := strings.IndexByte(alphabet, last)
	return s[:len(s)-1] + string(alphabet[(i+1)%len(alphabet)])
}

// Common rejections, the same for every family.
func commonCases(valid string) []addrCase {
	return []addrCase{
		{"empty", "", "empty"},
		{"leading space", " " + valid, "space"},
		{"trailing newline", valid + "\n", "control"},
		{"non-ASCII", valid + "é", "non-ASCII"},
	}
}

func TestValidateAddressBTC(t *testing.T) {
	t.Parallel()
	const bech32Charset = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"
	cases := []addrCase{
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
		{"base58 21-byte payload", b58(0x00, append(hash20, 1)), "wrong length"},
		{"testnet P2PKH", b58(0x6f, hash20), "testnet"},
		{"testnet P2SH", b58(0xc4, hash20), "testnet"},
		{"litecoin P2PKH", b58(0x30, hash20), "version byte 0x30"},
		{"bech32 bad checksum", flipLast("bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4", bech32Charset), "bad checksum"},
		{"bech32 mixed case", "bc1qW508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4", "mixes upper and lower case"},
		{"testnet P2WPKH BIP173", "tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx", "testnet"},
		{"regtest", segwit(t, "bcrt", 0, hash20, false), "testnet"},
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
		{"pay-to-anchor", segwit(t, "bc", 1, []byte{0x4e, 0x73}, true), "not a taproot output"},
	}
	runAddressCases(t, "btc", append(cases, commonCases("1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2")...))
}

func TestValidateAddressLTC(t *testing.T) {
	t.Parallel()
	runAddressCases(t, "ltc", append([]addrCase{
		{"L P2PKH", "LdP8Qox1VAhCzLJNqrr74YovaWYyNBUWvL", ""},
		{"M P2SH", b58(0x32, hash20), ""},
		{"legacy 3 P2SH", "3J98t1WpEZ73CNmQviecrnyiWrnqRhWNLy", ""},
		{"P2WPKH", "ltc1qjmxnz78nmc8nq77wuxh25n2es7rzm5c2rkk4wh", ""},
		{"P2WPKH upper case", strings.ToUpper("ltc1qjmxnz78nmc8nq77wuxh25n2es7rzm5c2rkk4wh"), ""},
		{"P2WSH", segwit(t, "ltc", 0, bytes.Repeat([]byte{7}, 32), false), ""},
		{"P2TR", "ltc1puht8rk95c53q3u9w3pf9h3jfcutcrl9lxc7rqsdthjrse4k6sn7q9tuqm9", ""},

		{"bad checksum", "LdP8Qox1VAhCzLJNqrr74YovaWYyNBUWvM", "bad checksum"},
		{"bech32 bad checksum", "ltc1qjmxnz78nmc8nq77wuxh25n2es7rzm5c2rkk4wj", "bad checksum"},
		{"bitcoin P2PKH", "1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2", "version byte 0x00 is not a ltc mainnet address"},
		{"bitcoin segwit", "bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu", "not \"ltc1\""},
		{"testnet P2PKH", b58(0x6f, hash20), "testnet"},
		{"testnet P2SH Q", b58(0x3a, hash20), "testnet"},
		{"testnet segwit", segwit(t, "tltc", 0, hash20, false), "testnet"},
		{"wrong length", b58(0x30, hash20[:19]), "wrong length"},
		{"v0 with bech32m", segwit(t, "ltc", 0, hash20, true), "uses bech32, not bech32m"},
		{"MWEB", "ltcmweb1qqv2g556ddyyqxvr25avn9vsepu75fnygr92pwxewl72ua26su57nsqu5r89cpckmja4m7mc3tm3jr", "MWEB"},
	}, commonCases("LdP8Qox1VAhCzLJNqrr74YovaWYyNBUWvL")...))
}

func TestValidateAddressDOGE(t *testing.T) {
	t.Parallel()
	runAddressCases(t, "doge", append([]addrCase{
		{"P2PKH derived", "DBus3bamQjgJULBJtYXpEzDWQRwF5iwxgC", ""},
		{"P2PKH", "DH5yaieqoZN36fDVciNyRueRGvGLR3mr7L", ""},
		{"P2SH", b58(0x16, hash20), ""},

		{"bad checksum", "DBus3bamQjgJULBJtYXpEzDWQRwF5iwxgD", "bad checksum"},
		{"bitcoin P2PKH", "1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2", "version byte 0x00"},
		{"bitcoin P2SH", "3J98t1WpEZ73CNmQviecrnyiWrnqRhWNLy", "version byte 0x05"},
		{"testnet P2PKH", b58(0x71, hash20), "testnet"},
		{"wrong length", b58(0x1e, append(hash20, 0)), "wrong length"},
		{"segwit address", "bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu", "doge has no segwit addresses"},
	}, commonCases("DBus3bamQjgJULBJtYXpEzDWQRwF5iwxgC")...))
}

func TestValidateAddressBCH(t *testing.T) {
	t.Parallel()
	const cash = "bitcoincash:qpm2qsznhks23z7629mms6s4cwef74vcwvy22gdx6a"
	runAddressCases(t, "bch", append([]addrCase{
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
		{"token-aware type", mustCashAddr(t, "bitcoincash", 0x10, hash20), "unsupported address type 2"},
		{"reserved bit", mustCashAddr(t, "bitcoincash", 0x80, hash20), "reserved bit"},
		{"size bits disagree with length", mustCashAddr(t, "bitcoincash", 0x01, hash20), "wrong length"},
		{"too short", "bitcoincash:qpm2qszn", "too short"},
		{"legacy testnet", b58(0x6f, hash20), "testnet"},
		{"legacy bad checksum", "1BpEi6DfDAUFd7GtittLSdBeYJvcoaVggv", "bad checksum"},
		{"bitcoin segwit", "bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu", "bch has no segwit addresses"},
	}, commonCases(cash)...))
}

func mustCashAddr(t *testing.T, prefix string, version byte, hash []byte) string {
	t.Helper()
	s, err := cashAddrEncode(prefix, version, hash)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestValidateAddressEVM(t *testing.T) {
	t.Parallel()
	cases := append([]addrCase{
		// EIP-55 test cases: all caps, all lower, normal.
		{"EIP-55 all caps 1", "0x52908400098527886E0F7030069857D2E4169EE7", ""},
		{"EIP-55 all caps 2", "0x8617E340B3D01FA5F11F306F4090FD50E238070D", ""},
		{"EIP-55 all lower 1", "0xde709f2102306220921060314715629080e2fb77", ""},
		{"EIP-55 all lower 2", "0x27b1fdb04752bbc536007a920d24acb045561c26", ""},
		{"EIP-55 normal 1", "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed", ""},
		{"EIP-55 normal 2", "0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359", ""},
		{"EIP-55 normal 3", "0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB", ""},
		{"EIP-55 normal 4", "0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb", ""},
		{"lower-cased checksummed", "0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed", ""},
		{"upper-cased checksummed", "0x5AAEB6053F3E94C9B9A09F33669435E7EF1BEAED", ""},

		{"mixed case wrong checksum", "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD", "bad EIP-55 checksum"},
		{"mixed case one letter flipped", "0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5D359", "bad EIP-55 checksum"},
		{"no 0x", "5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed", "must start with \"0x\""},
		{"upper-case 0X", "0X5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed", "lower-case \"0x\""},
		{"39 digits", "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAe", "wrong length: 39"},
		{"41 digits", "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed0", "wrong length: 41"},
		{"32-byte hash", "0x" + strings.Repeat("ab", 32), "wrong length: 64"},
		{"non-hex", "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeg", "invalid hex character 'g'"},
		{"zero address", "0x0000000000000000000000000000000000000000", "zero address"},
		{"tron address", "TUEZSdKsoDHQMeZwihtdoBiN46zxhGWYdH", "must start with \"0x\""},
	}, commonCases("0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed")...)
	for _, ticker := range []string{"eth", "erc20/usdt", "erc20/usdc", "bep20/usdt", "polygon/pol"} {
		t.Run(ticker, func(t *testing.T) {
			t.Parallel()
			runAddressCases(t, ticker, cases)
		})
	}
}

func TestEIP55(t *testing.T) {
	t.Parallel()
	// The EIP-55 "normal" test cases: checksumming the lower-case form must
	// reproduce them.
	for _, want := range []string{
		"0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed",
		"0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359",
		"0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB",
		"0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb",
		"0x52908400098527886E0F7030069857D2E4169EE7",
		"0x8617E340B3D01FA5F11F306F4090FD50E238070D",
		"0xde709f2102306220921060314715629080e2fb77",
		"0x27b1fdb04752bbc536007a920d24acb045561c26",
	} {
		t.Run(want, func(t *testing.T) {
			t.Parallel()
			raw := mustHex(t, strings.ToLower(want[2:]))
			if got := eip55(raw); got != want {
				t.Errorf("eip55(%x) = %s, want %s", raw, got, want)
			}
		})
	}
}

func TestValidateAddressTron(t *testing.T) {
	t.Parallel()
	const valid = "TUEZSdKsoDHQMeZwihtdoBiN46zxhGWYdH"
	cases := append([]addrCase{
		{"derived", valid, ""},
		{"USDT contract", "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t", ""},
		{"index 1", "TSeJkUh4Qv67VNFwY8LaAxERygNdy6NQZK", ""},

		{"bad checksum", "TUEZSdKsoDHQMeZwihtdoBiN46zxhGWYdJ", "bad checksum"},
		{"bitcoin address", "1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2", "first byte 0x00, want 0x41"},
		{"wrong length", b58(0x41, append(hash20, 0)), "wrong length: 22 bytes"},
		{"short", b58(0x41, hash20[:19]), "wrong length: 20 bytes"},
		{"hex form", "41e825d52582eec346c839b4875376117904a76cbc", "invalid character '0'"},
		{"evm address", "0x9858EfFD232B4033E47d90003D41EC34EcaEda94", "invalid character '0'"},
		{"zero address", b58(0x41, make([]byte, 20)), "zero address"},
		{"invalid character", "TUEZSdKsoDHQMeZwihtdoBiN46zxhGWYdl", "invalid character 'l'"},
	}, commonCases(valid)...)
	for _, ticker := range []string{"trx", "trc20/usdt"} {
		t.Run(ticker, func(t *testing.T) {
			t.Parallel()
			runAddressCases(t, ticker, cases)
		})
	}
}

func TestValidateAddressSolana(t *testing.T) {
	t.Parallel()
	const valid = "HAgk14JpMQLgt6rVgv7cBQFJWFto5Dqxi472uT3DKpqk"
	cases := append([]addrCase{
		{"derived", valid, ""},
		{"USDC mint", "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v", ""},
		{"token program", "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA", ""},
		{"leading zero byte", base58.Encode(append([]byte{0}, bytes.Repeat([]byte{9}, 31)...)), ""},

		{"system program", "11111111111111111111111111111111", "System Program"},
		{"31 bytes", base58.Encode(bytes.Repeat([]byte{9}, 31)), "decodes to 31 bytes"},
		{"33 bytes", base58.Encode(bytes.Repeat([]byte{9}, 33)), "decodes to 33 bytes"},
		{"one character changed to 0", "HAgk14JpMQLgt6rVgv7cBQFJWFto5Dqxi472uT3DKpq0", "invalid character '0'"},
		{"letter O", "HAgk14JpMQLgt6rVgv7cBQFJWFto5Dqxi472uT3DKpqO", "invalid character 'O'"},
		{"evm address", "0x9858EfFD232B4033E47d90003D41EC34EcaEda94", "invalid character '0'"},
		{"tron address", "TUEZSdKsoDHQMeZwihtdoBiN46zxhGWYdH", "decodes to 25 bytes"},
	}, commonCases(valid)...)
	for _, ticker := range []string{"sol", "sol/usdc"} {
		t.Run(ticker, func(t *testing.T) {
			t.Parallel()
			runAddressCases(t, ticker, cases)
		})
	}
}

func TestValidateAddressUnsupportedTicker(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		t    Ticker
	}{
		{"zero ticker", Ticker{}},
		{"unknown family", Ticker{Ticker: "xmr", Network: "xmr", Family: "cryptonote"}},
		{"unknown utxo network", Ticker{Ticker: "dash", Network: "dash", Family: FamilyUTXO}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := ValidateAddress(tt.t, "1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2")
			if !errors.Is(err, ErrUnsupportedNetwork) || errors.Is(err, ErrInvalidAddress) {
				t.Errorf("error = %v, want ErrUnsupportedNetwork only", err)
			}
		})
	}
}

func TestAddressErrorMessage(t *testing.T) {
	t.Parallel()
	btc, _ := DefaultRegistry().Lookup("btc")
	tests := []struct {
		name string
		addr string
		want string
	}{
		{"base58", "1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN3", `invalid btc address "1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN3": bad checksum`},
		{"long input truncated", strings.Repeat("1", 200), `invalid btc address "` + strings.Repeat("1", 128) + `...": `},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := ValidateAddress(btc, tt.addr)
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("error = %v, want prefix %q", err, tt.want)
			}
		})
	}
}

// FuzzValidateAddress checks that no input panics and that every error is
// classified.
func FuzzValidateAddress(f *testing.F) {
	for _, s := range []string{
		"", "1", "bc1", "bitcoincash:", ":", "0x", "T", "11111111111111111111111111111111",
		"1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2", "bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqzk5jj0",
		"bitcoincash:qpm2qsznhks23z7629mms6s4cwef74vcwvy22gdx6a", "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed",
		"TUEZSdKsoDHQMeZwihtdoBiN46zxhGWYdH", "HAgk14JpMQLgt6rVgv7cBQFJWFto5Dqxi472uT3DKpqk",
	} {
		f.Add(s)
	}
	tickers := DefaultRegistry().All()
	f.Fuzz(func(t *testing.T, addr string) {
		for _, tk := range tickers {
			if err := ValidateAddress(tk, addr); err != nil && !errors.Is(err, ErrInvalidAddress) {
				t.Fatalf("ValidateAddress(%s, %q) = %v: not ErrInvalidAddress", tk.Ticker, addr, err)
			}
		}
	})
}

func mustHex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
