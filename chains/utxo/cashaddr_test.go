package utxo

import (
	"bytes"
	"github.com/payhook/payhook/chains/internal/addrtest"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/btcutil/base58"
)

// Vectors from the CashAddr specification (version 1.1),
// https://upgradespecs.bitcoincashnode.org/cashaddr/ (spec/cashaddr.md).

func TestCashAddrChecksumVectors(t *testing.T) {
	t.Parallel()
	// "valid checksum but purposely not a valid payload".
	for _, s := range []string{
		"prefix:x64nx6hz",
		"p:gpf8m4h7",
		"bitcoincash:qpzry9x8gf2tvdw0s3jn54khce6mua7lcw20ayyn",
		"bchtest:testnetaddress4d6njnut",
		"bchreg:555555555555555555555555555555555555555555555udxmlmrz",
	} {
		t.Run(s, func(t *testing.T) {
			t.Parallel()
			prefix, payload, _ := strings.Cut(s, ":")
			values := make([]byte, len(payload))
			for i, c := range []byte(payload) {
				values[i] = byte(strings.IndexByte(cashAddrCharset, c))
			}
			if got := cashAddrPolymod(cashAddrChecksumInput(prefix, values)); got != 0 {
				t.Errorf("polymod = %#x, want 0", got)
			}
			values[0] ^= 1
			if cashAddrPolymod(cashAddrChecksumInput(prefix, values)) == 0 {
				t.Error("polymod still 0 after changing a value")
			}
		})
	}
}

func TestCashAddrLegacyTranslation(t *testing.T) {
	t.Parallel()
	tests := []struct{ legacy, cash string }{
		{"1BpEi6DfDAUFd7GtittLSdBeYJvcoaVggu", "bitcoincash:qpm2qsznhks23z7629mms6s4cwef74vcwvy22gdx6a"},
		{"1KXrWXciRDZUpQwQmuM1DbwsKDLYAYsVLR", "bitcoincash:qr95sy3j9xwd2ap32xkykttr4cvcu7as4y0qverfuy"},
		{"16w1D5WRVKJuZUsSRzdLp9w3YGcgoxDXb", "bitcoincash:qqq3728yw0y47sqn6l2na30mcw6zm78dzqre909m2r"},
		{"3CWFddi6m4ndiGyKqzYvsFYagqDLPVMTzC", "bitcoincash:ppm2qsznhks23z7629mms6s4cwef74vcwvn0h829pq"},
		{"3LDsS579y7sruadqu11beEJoTjdFiFCdX4", "bitcoincash:pr95sy3j9xwd2ap32xkykttr4cvcu7as4yc93ky28e"},
		{"31nwvkZwyPdgzjBJZXfDmSWsC4ZLKpYyUw", "bitcoincash:pqq3728yw0y47sqn6l2na30mcw6zm78dzq5ucqzc37"},
	}
	bch := ticker("bch")
	for _, tt := range tests {
		t.Run(tt.legacy, func(t *testing.T) {
			t.Parallel()
			hash, version, err := base58.CheckDecode(tt.legacy)
			if err != nil {
				t.Fatal(err)
			}
			cashVersion := byte(0x00) // P2PKH
			if version == 0x05 {
				cashVersion = 0x08 // P2SH
			}
			got, err := cashAddrEncode(cashAddrMainPrefix, cashVersion, hash)
			if err != nil || got != tt.cash {
				t.Errorf("encode = %q, %v; want %q", got, err, tt.cash)
			}
			prefix, data, reason := cashAddrDecode(tt.cash)
			if reason != "" || prefix != cashAddrMainPrefix || data[0] != cashVersion || !bytes.Equal(data[1:], hash) {
				t.Errorf("decode = %q, %x, %q; want %q, %02x%x", prefix, data, reason, cashAddrMainPrefix, cashVersion, hash)
			}
			for _, a := range []string{tt.legacy, tt.cash} {
				if err := (Family{}).ValidateAddress(bch, a); err != nil {
					t.Errorf("ValidateAddress(%q) = %v", a, err)
				}
			}
		})
	}
}

func TestCashAddrLargerVectors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		typ  byte
		addr string
		data string
	}{
		{0, "bitcoincash:qr6m7j9njldwwzlg9v7v53unlr4jkmx6eylep8ekg2", "F5BF48B397DAE70BE82B3CCA4793F8EB2B6CDAC9"},
		{1, "bchtest:pr6m7j9njldwwzlg9v7v53unlr4jkmx6eyvwc0uz5t", "F5BF48B397DAE70BE82B3CCA4793F8EB2B6CDAC9"},
		{1, "pref:pr6m7j9njldwwzlg9v7v53unlr4jkmx6ey65nvtks5", "F5BF48B397DAE70BE82B3CCA4793F8EB2B6CDAC9"},
		{0, "bitcoincash:q9adhakpwzztepkpwp5z0dq62m6u5v5xtyj7j3h2ws4mr9g0", "7ADBF6C17084BC86C1706827B41A56F5CA32865925E946EA"},
		{1, "bchtest:p9adhakpwzztepkpwp5z0dq62m6u5v5xtyj7j3h2u94tsynr", "7ADBF6C17084BC86C1706827B41A56F5CA32865925E946EA"},
		{1, "pref:p9adhakpwzztepkpwp5z0dq62m6u5v5xtyj7j3h2khlwwk5v", "7ADBF6C17084BC86C1706827B41A56F5CA32865925E946EA"},
		{0, "bitcoincash:qgagf7w02x4wnz3mkwnchut2vxphjzccwxgjvvjmlsxqwkcw59jxxuz", "3A84F9CF51AAE98A3BB3A78BF16A6183790B18719126325BFC0C075B"},
		{1, "bchtest:pgagf7w02x4wnz3mkwnchut2vxphjzccwxgjvvjmlsxqwkcvs7md7wt", "3A84F9CF51AAE98A3BB3A78BF16A6183790B18719126325BFC0C075B"},
		{1, "pref:pgagf7w02x4wnz3mkwnchut2vxphjzccwxgjvvjmlsxqwkcrsr6gzkn", "3A84F9CF51AAE98A3BB3A78BF16A6183790B18719126325BFC0C075B"},
		{0, "bitcoincash:qvch8mmxy0rtfrlarg7ucrxxfzds5pamg73h7370aa87d80gyhqxq5nlegake", "3173EF6623C6B48FFD1A3DCC0CC6489B0A07BB47A37F47CFEF4FE69DE825C060"},
		{1, "bchtest:pvch8mmxy0rtfrlarg7ucrxxfzds5pamg73h7370aa87d80gyhqxq7fqng6m6", "3173EF6623C6B48FFD1A3DCC0CC6489B0A07BB47A37F47CFEF4FE69DE825C060"},
		{1, "pref:pvch8mmxy0rtfrlarg7ucrxxfzds5pamg73h7370aa87d80gyhqxq4k9m7qf9", "3173EF6623C6B48FFD1A3DCC0CC6489B0A07BB47A37F47CFEF4FE69DE825C060"},
		{0, "bitcoincash:qnq8zwpj8cq05n7pytfmskuk9r4gzzel8qtsvwz79zdskftrzxtar994cgutavfklv39gr3uvz", "C07138323E00FA4FC122D3B85B9628EA810B3F381706385E289B0B25631197D194B5C238BEB136FB"},
		{1, "bchtest:pnq8zwpj8cq05n7pytfmskuk9r4gzzel8qtsvwz79zdskftrzxtar994cgutavfklvmgm6ynej", "C07138323E00FA4FC122D3B85B9628EA810B3F381706385E289B0B25631197D194B5C238BEB136FB"},
		{1, "pref:pnq8zwpj8cq05n7pytfmskuk9r4gzzel8qtsvwz79zdskftrzxtar994cgutavfklv0vx5z0w3", "C07138323E00FA4FC122D3B85B9628EA810B3F381706385E289B0B25631197D194B5C238BEB136FB"},
		{0, "bitcoincash:qh3krj5607v3qlqh5c3wq3lrw3wnuxw0sp8dv0zugrrt5a3kj6ucysfz8kxwv2k53krr7n933jfsunqex2w82sl", "E361CA9A7F99107C17A622E047E3745D3E19CF804ED63C5C40C6BA763696B98241223D8CE62AD48D863F4CB18C930E4C"},
		{1, "bchtest:ph3krj5607v3qlqh5c3wq3lrw3wnuxw0sp8dv0zugrrt5a3kj6ucysfz8kxwv2k53krr7n933jfsunqnzf7mt6x", "E361CA9A7F99107C17A622E047E3745D3E19CF804ED63C5C40C6BA763696B98241223D8CE62AD48D863F4CB18C930E4C"},
		{1, "pref:ph3krj5607v3qlqh5c3wq3lrw3wnuxw0sp8dv0zugrrt5a3kj6ucysfz8kxwv2k53krr7n933jfsunqjntdfcwg", "E361CA9A7F99107C17A622E047E3745D3E19CF804ED63C5C40C6BA763696B98241223D8CE62AD48D863F4CB18C930E4C"},
		{0, "bitcoincash:qmvl5lzvdm6km38lgga64ek5jhdl7e3aqd9895wu04fvhlnare5937w4ywkq57juxsrhvw8ym5d8qx7sz7zz0zvcypqscw8jd03f", "D9FA7C4C6EF56DC4FF423BAAE6D495DBFF663D034A72D1DC7D52CBFE7D1E6858F9D523AC0A7A5C34077638E4DD1A701BD017842789982041"},
		{1, "bchtest:pmvl5lzvdm6km38lgga64ek5jhdl7e3aqd9895wu04fvhlnare5937w4ywkq57juxsrhvw8ym5d8qx7sz7zz0zvcypqs6kgdsg2g", "D9FA7C4C6EF56DC4FF423BAAE6D495DBFF663D034A72D1DC7D52CBFE7D1E6858F9D523AC0A7A5C34077638E4DD1A701BD017842789982041"},
		{1, "pref:pmvl5lzvdm6km38lgga64ek5jhdl7e3aqd9895wu04fvhlnare5937w4ywkq57juxsrhvw8ym5d8qx7sz7zz0zvcypqsammyqffl", "D9FA7C4C6EF56DC4FF423BAAE6D495DBFF663D034A72D1DC7D52CBFE7D1E6858F9D523AC0A7A5C34077638E4DD1A701BD017842789982041"},
		{0, "bitcoincash:qlg0x333p4238k0qrc5ej7rzfw5g8e4a4r6vvzyrcy8j3s5k0en7calvclhw46hudk5flttj6ydvjc0pv3nchp52amk97tqa5zygg96mtky5sv5w", "D0F346310D5513D9E01E299978624BA883E6BDA8F4C60883C10F28C2967E67EC77ECC7EEEAEAFC6DA89FAD72D11AC961E164678B868AEEEC5F2C1DA08884175B"},
		{1, "bchtest:plg0x333p4238k0qrc5ej7rzfw5g8e4a4r6vvzyrcy8j3s5k0en7calvclhw46hudk5flttj6ydvjc0pv3nchp52amk97tqa5zygg96mc773cwez", "D0F346310D5513D9E01E299978624BA883E6BDA8F4C60883C10F28C2967E67EC77ECC7EEEAEAFC6DA89FAD72D11AC961E164678B868AEEEC5F2C1DA08884175B"},
		{1, "pref:plg0x333p4238k0qrc5ej7rzfw5g8e4a4r6vvzyrcy8j3s5k0en7calvclhw46hudk5flttj6ydvjc0pv3nchp52amk97tqa5zygg96mg7pj3lh8", "D0F346310D5513D9E01E299978624BA883E6BDA8F4C60883C10F28C2967E67EC77ECC7EEEAEAFC6DA89FAD72D11AC961E164678B868AEEEC5F2C1DA08884175B"},
	}
	sizeBits := map[int]byte{20: 0, 24: 1, 28: 2, 32: 3, 40: 4, 48: 5, 56: 6, 64: 7}
	for _, tt := range tests {
		t.Run(tt.addr, func(t *testing.T) {
			t.Parallel()
			hash := addrtest.Hex(t, strings.ToLower(tt.data))
			version := tt.typ<<3 | sizeBits[len(hash)]
			prefix, _, _ := strings.Cut(tt.addr, ":")

			got, err := cashAddrEncode(prefix, version, hash)
			if err != nil || got != tt.addr {
				t.Errorf("encode = %q, %v; want %q", got, err, tt.addr)
			}
			gotPrefix, data, reason := cashAddrDecode(tt.addr)
			if reason != "" || gotPrefix != prefix || data[0] != version || !bytes.Equal(data[1:], hash) {
				t.Errorf("decode = %q, %x, %q; want %q, %02x%x", gotPrefix, data, reason, prefix, version, hash)
			}
			if _, _, reason := cashAddrDecode(strings.ToUpper(tt.addr)); reason != "" {
				t.Errorf("upper-case decode: %s", reason)
			}
		})
	}
}
