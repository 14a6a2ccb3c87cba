package nodetest

import (
	"fmt"
	"testing"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/btcutil/hdkeychain"
	"github.com/btcsuite/btcd/chaincfg"
)

// MerchantWallet makes wallet, a legacy wallet of the node that plays a
// merchant's hardware wallet: it holds the private keys of the BIP 84
// testnet account m/84'/1'/0' of seed (its receive chain /0/* and change
// chain /1/*, indexes 0 to 50). It returns the account's public
// descriptor wpkh([fingerprint/84h/1h/0h]tpub.../0/*), what the merchant
// gives payhook.
func (n *Litecoind) MerchantWallet(t testing.TB, wallet string, seed []byte) string {
	t.Helper()
	master, err := hdkeychain.NewMaster(seed, &chaincfg.TestNet3Params)
	if err != nil {
		t.Fatal(err)
	}
	mpub, err := master.ECPubKey()
	if err != nil {
		t.Fatal(err)
	}
	fp := btcutil.Hash160(mpub.SerializeCompressed())[:4]
	acct := master
	for _, s := range []uint32{84, 1, 0} {
		if acct, err = acct.Derive(hdkeychain.HardenedKeyStart + s); err != nil {
			t.Fatal(err)
		}
	}
	pub, err := acct.Neuter()
	if err != nil {
		t.Fatal(err)
	}
	desc := func(key string, chain int) string { return fmt.Sprintf("wpkh([%x/84h/1h/0h]%s/%d/*)", fp, key, chain) }
	n.Must(nil, "createwallet", wallet)
	var imports []map[string]any
	for chain := range 2 {
		var info struct {
			Checksum string `json:"checksum"`
		}
		n.Must(&info, "getdescriptorinfo", desc(acct.String(), chain))
		imports = append(imports, map[string]any{"desc": desc(acct.String(), chain) + "#" + info.Checksum,
			"range": []int{0, 50}, "timestamp": "now", "internal": chain == 1})
	}
	var res []struct {
		Success bool `json:"success"`
		Error   any  `json:"error"`
	}
	if err := n.CallWallet(wallet, &res, "importmulti", imports); err != nil || len(res) != 2 || !res[0].Success || !res[1].Success {
		t.Fatalf("importmulti of the merchant's keys: %+v %v", res, err)
	}
	return desc(pub.String(), 0)
}
