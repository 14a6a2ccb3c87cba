package project_test

import (
	"strings"
	"testing"

	"github.com/payhook/payhook/server/merchant/project"
)

// TestIsKeySpec: keys and descriptors are keys (private ones too, so that
// they are refused as keys); addresses, even one that begins as a key
// prefix does, and address lists are not.
func TestIsKeySpec(t *testing.T) {
	zpub := "zpub6rFR7y4Q2AijBEqTUquhVz398htDFrtymD9xYYfG1m4wAcvPhXNfE3EfH1r1ADqtfSdVCToUG868RvUUkgDKf31mGDtKsAYz2oz2AGutZYs"
	for v, want := range map[string]bool{
		zpub:                                         true,
		"  " + zpub + " ":                            true,
		"wpkh(" + zpub + "/0/*)":                     true,
		"[d34db33f/84h/0h/0h]" + zpub:                true,
		"xprv" + strings.Repeat("a", 107):            true,
		"LtubXq8bJ3fT2e1KFNq3s9aUvs2ZrYbkAP":         false, // a Litecoin address that begins as Ltub does
		"bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu": false,
		"bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu,bc1qxyz@0.5":             false,
		"0x52908400098527886E0F7030069857D2E4169EE7":                         false,
		"tpub" + strings.Repeat("b", 60) + ",tpub" + strings.Repeat("c", 60): false,
	} {
		if got := project.IsKeySpec(v); got != want {
			t.Errorf("IsKeySpec(%q) = %v, want %v", v, got, want)
		}
	}
}
