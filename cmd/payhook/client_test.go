package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestClientCommandsServerFlag: devnet, watch, listen and chain status take
// the same --server flag, and their error names the address tried.
func TestClientCommandsServerFlag(t *testing.T) {
	const addr = "http://127.0.0.1:1"
	rows := [][]string{
		{"devnet", "pay", "--ticker", "btc", "--address", "x", "--amount", "0.01"},
		{"devnet", "mine", "--ticker", "btc"},
		{"devnet", "reorg", "--ticker", "btc", "--depth", "1"},
		{"watch", "--apikey", "ph_x"},
		{"listen", "--apikey", "ph_x", "--forward-to", "http://127.0.0.1:3000/hook"},
		{"chain", "status"},
	}
	for _, args := range rows {
		for _, server := range []string{addr, "127.0.0.1:1"} {
			var out, errOut bytes.Buffer
			err := run(context.Background(), append(args, "--server", server), &out, &errOut)
			if err == nil || !strings.Contains(err.Error(), "cannot reach payhook at "+addr) || !strings.Contains(err.Error(), "--server") {
				t.Errorf("payhook %s --server %s: %v, want an error naming %s and --server", strings.Join(args, " "), server, err, addr)
			}
		}
		var out, errOut bytes.Buffer
		if err := run(context.Background(), append(args, "--server", "ftp://x"), &out, &errOut); err == nil || !strings.Contains(err.Error(), "--server") {
			t.Errorf("payhook %s --server ftp://x: %v", strings.Join(args, " "), err)
		}
	}
}
