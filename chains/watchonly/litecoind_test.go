package watchonly_test

import (
	"crypto/rand"
	"fmt"
	"strings"
	"testing"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/nodetest"
	"github.com/payhook/payhook/chains/watchonly"
)

// TestAgainstLitecoind: for every script type, a descriptor of a tpub
// from a random seed (with its key origin) is what litecoind in regtest
// makes of it: getdescriptorinfo computes payhook's checksum and the same
// normalized descriptor, and deriveaddresses over [0,19] gives exactly
// payhook's first 20 addresses, in order. The bare tpub, upub and vpub of
// the same account give the addresses of the equivalent descriptor.
//
// Litecoin Core 0.21 has no tr() descriptor ("is not a valid descriptor
// function"), although its network has taproot outputs: for tr the node
// instead checks each of payhook's 20 addresses with validateaddress (a
// valid witness version 1 address of regtest, bech32m), and the BIP 86
// vectors of TestBIPVectors check the output key. Should the node learn
// tr(), the test compares deriveaddresses as for the other types.
func TestAgainstLitecoind(t *testing.T) {
	n := nodetest.StartLitecoind(t, 0)
	call := func(t *testing.T, out any, method string, params ...any) {
		t.Helper()
		if err := n.Call(out, method, params...); err != nil {
			t.Fatalf("litecoind %s: %v", method, err)
		}
	}
	ltc := ticker(t, "ltc", chains.Regtest)
	seed := make([]byte, 32)
	if _, err := rand.Read(seed); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		function string
		purpose  uint32
		bare     uint32 // the SLIP-132 version of the equivalent bare key; 0: none
	}{
		{"pkh", 44, tpubVersion},
		{"sh(wpkh", 49, upubVersion},
		{"wpkh", 84, vpubVersion},
		{"tr", 86, 0},
	}
	for _, c := range cases {
		t.Run(c.function, func(t *testing.T) {
			tpub, fp := accountKey(t, seed, tpubVersion, h+c.purpose, h+1, h+0)
			spec := fmt.Sprintf("%s([%08x/%dh/1h/0h]%s/0/*)", c.function, fp, c.purpose, tpub)
			if strings.HasPrefix(c.function, "sh(") {
				spec += ")"
			}
			k := mustParse(t, ltc, spec)
			desc := k.Descriptor()
			body, sum, _ := strings.Cut(desc, "#")
			if body != spec {
				t.Fatalf("Descriptor() = %s, want %s#...", desc, spec)
			}

			var info struct {
				Descriptor string `json:"descriptor"`
				Checksum   string `json:"checksum"`
				IsRange    bool   `json:"isrange"`
			}
			if err := n.Call(&info, "getdescriptorinfo", body); err != nil {
				if c.function == "tr" && strings.Contains(err.Error(), "is not a valid descriptor function") {
					checkTaprootAddresses(t, n, k)
					return
				}
				t.Fatalf("litecoind getdescriptorinfo: %v", err)
			}
			if info.Checksum != sum {
				t.Errorf("litecoind's checksum of %s is %s, payhook's %s", body, info.Checksum, sum)
			}
			nodeBody, _, _ := strings.Cut(info.Descriptor, "#")
			if strings.ReplaceAll(nodeBody, "'", "h") != body || !info.IsRange {
				t.Errorf("litecoind normalizes %s to %s (range %v)", body, info.Descriptor, info.IsRange)
			}

			var want []string
			call(t, &want, "deriveaddresses", desc, []int{0, 19})
			if len(want) != 20 {
				t.Fatalf("litecoind derived %d addresses, want 20", len(want))
			}
			got := addresses(t, k, 20)
			for i := range want {
				if got[i] != want[i] {
					t.Errorf("address %d: payhook %s, litecoind %s", i, got[i], want[i])
				}
			}

			if c.bare == 0 {
				return
			}
			bare, _ := accountKey(t, seed, c.bare, h+c.purpose, h+1, h+0)
			bk := mustParse(t, ltc, bare)
			if bareGot := addresses(t, bk, 20); strings.Join(bareGot, " ") != strings.Join(want, " ") {
				t.Errorf("bare %.4s key gives %v, the descriptor %v", bare, bareGot, want)
			}
			// A bare key has no origin: its descriptor is the same without it.
			var bareInfo struct {
				Checksum string `json:"checksum"`
			}
			bareBody, bareSum, _ := strings.Cut(bk.Descriptor(), "#")
			call(t, &bareInfo, "getdescriptorinfo", bareBody)
			if bareInfo.Checksum != bareSum {
				t.Errorf("litecoind's checksum of %s is %s, payhook's %s", bareBody, bareInfo.Checksum, bareSum)
			}
		})
	}
}

// checkTaprootAddresses asks the node to validate the first 20 addresses
// of a tr() key: valid regtest addresses paying a witness version 1
// program of 32 bytes.
func checkTaprootAddresses(t *testing.T, n *nodetest.Litecoind, k *watchonly.Key) {
	t.Helper()
	for i, a := range addresses(t, k, 20) {
		var v struct {
			IsValid        bool   `json:"isvalid"`
			IsWitness      bool   `json:"iswitness"`
			WitnessVersion int    `json:"witness_version"`
			WitnessProgram string `json:"witness_program"`
		}
		if err := n.Call(&v, "validateaddress", a); err != nil {
			t.Fatalf("litecoind validateaddress: %v", err)
		}
		if !v.IsValid || !v.IsWitness || v.WitnessVersion != 1 || len(v.WitnessProgram) != 64 {
			t.Errorf("address %d %s: litecoind says %+v", i, a, v)
		}
	}
}
