package main

import (
	"slices"
	"testing"

	"github.com/payhook/payhook/server/ledger/export"
)

// TestLedgerColumnsMatchExport: the documented export columns are the ones
// the server writes, in its order.
func TestLedgerColumnsMatchExport(t *testing.T) {
	var names []string
	for _, c := range ledgerColumns {
		names = append(names, c.name)
	}
	if !slices.Equal(names, export.Columns) {
		t.Fatalf("documented columns %v, the export writes %v", names, export.Columns)
	}
}
