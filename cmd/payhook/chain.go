package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/server"
)

// nodesFlag collects --node TICKER=URL (repeatable).
type nodesFlag map[string]string

func (n nodesFlag) String() string {
	var parts []string
	for t := range n {
		parts = append(parts, t+"=…")
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}

func (n nodesFlag) Set(s string) error {
	t, u, ok := strings.Cut(s, "=")
	t = strings.ToLower(strings.TrimSpace(t))
	if !ok || t == "" || strings.TrimSpace(u) == "" {
		return errors.New("want TICKER=URL, e.g. ltc=http://user:pass@127.0.0.1:19443/?network=regtest")
	}
	if _, dup := n[t]; dup {
		return fmt.Errorf("%s: a second node; one node per ticker", t)
	}
	n[t] = strings.TrimSpace(u)
	return nil
}

// feesFlag collects --fallback-fee TICKER=RATE (repeatable).
type feesFlag map[string]decimal.Decimal

func (f feesFlag) String() string { return fmt.Sprint(map[string]decimal.Decimal(f)) }

func (f feesFlag) Set(s string) error {
	for item := range strings.SplitSeq(s, ",") {
		t, r, ok := strings.Cut(item, "=")
		rate, err := decimal.NewFromString(strings.TrimSpace(r))
		if !ok || err != nil {
			return fmt.Errorf("%q: want TICKER=RATE in coin per 1000 vbytes, e.g. ltc=0.0001", item)
		}
		f[strings.ToLower(strings.TrimSpace(t))] = rate
	}
	return nil
}

// intervalsFlag collects --payout-interval TICKER=DURATION (repeatable).
type intervalsFlag map[string]time.Duration

func (f intervalsFlag) String() string { return fmt.Sprint(map[string]time.Duration(f)) }

func (f intervalsFlag) Set(s string) error {
	for item := range strings.SplitSeq(s, ",") {
		t, v, ok := strings.Cut(item, "=")
		d, err := time.ParseDuration(strings.TrimSpace(v))
		if !ok || err != nil || d <= 0 {
			return fmt.Errorf("%q: want TICKER=DURATION with a positive duration, e.g. ltc=10m", item)
		}
		f[strings.ToLower(strings.TrimSpace(t))] = d
	}
	return nil
}

// minBatchFlag collects --payout-min-batch TICKER=AMOUNT (repeatable).
type minBatchFlag map[string]decimal.Decimal

func (f minBatchFlag) String() string { return fmt.Sprint(map[string]decimal.Decimal(f)) }

func (f minBatchFlag) Set(s string) error {
	for item := range strings.SplitSeq(s, ",") {
		t, v, ok := strings.Cut(item, "=")
		a, err := decimal.NewFromString(strings.TrimSpace(v))
		if !ok || err != nil || a.Sign() <= 0 {
			return fmt.Errorf("%q: want TICKER=AMOUNT with a positive amount in the coin, e.g. ltc=0.5", item)
		}
		f[strings.ToLower(strings.TrimSpace(t))] = a
	}
	return nil
}

// readNodeFile adds the TICKER=URL lines of path (blank lines and # comments
// skipped) to nodes.
func readNodeFile(path string, nodes nodesFlag) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("--node-file: %w", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for line := 1; sc.Scan(); line++ {
		s := strings.TrimSpace(sc.Text())
		if s == "" || strings.HasPrefix(s, "#") {
			continue
		}
		if err := nodes.Set(s); err != nil {
			return fmt.Errorf("--node-file %s line %d: %w", path, line, err)
		}
	}
	return sc.Err()
}

// envNodes adds PAYHOOK_NODE_<TICKER>=URL variables to nodes: the ticker
// lower-cased with "_" for "/" (PAYHOOK_NODE_ERC20_USDT is erc20/usdt).
// A ticker given on the command line or in the node file wins.
func envNodes(environ []string, nodes nodesFlag) {
	for _, kv := range environ {
		k, v, _ := strings.Cut(kv, "=")
		t, ok := strings.CutPrefix(k, "PAYHOOK_NODE_")
		if !ok || t == "" || t == "FILE" || t == "TIMEOUT" {
			continue
		}
		t = strings.ToLower(strings.ReplaceAll(t, "_", "/"))
		if _, given := nodes[t]; !given && v != "" {
			nodes[t] = v
		}
	}
}

// chainCmd: payhook chain status [--server http://127.0.0.1:8080] [--apikey KEY] [--json].
// The chains' details are the operator's: on the public listener they need
// an operator's key (--apikey, PAYHOOK_APIKEY); the operator listener
// (serve --operator-listen) serves them without one.
func chainCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "status" {
		return errors.New("usage: payhook chain status [--server http://127.0.0.1:8080] [--apikey KEY] [--json]")
	}
	fs := newFlagSet("payhook chain status", stderr)
	addr := serverFlag(fs)
	key := fs.String("apikey", "", "an operator's API key (payhook apikey create --operator), which the REST address needs for the chains' details; the operator listener (serve --operator-listen) needs none")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parse(fs, args[1:]); err != nil {
		return err
	}
	base, err := serverURL(*addr)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	where := base + "/healthz"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, where, nil)
	if err != nil {
		return fmt.Errorf("--server: %w", err)
	}
	if k := strings.TrimSpace(*key); k != "" {
		req.Header.Set("apikey", k)
	}
	resp, err := newHTTPClient().Do(req)
	if err != nil {
		return reachError(where, err)
	}
	defer resp.Body.Close()
	var body struct {
		Status string                         `json:"status"`
		Error  string                         `json:"error"`
		Chains *map[string]server.ChainStatus `json:"chains"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return fmt.Errorf("%s: HTTP %d, not payhook's health answer (is --server payhook's HTTP address?): %w", where, resp.StatusCode, err)
	}
	switch {
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return fmt.Errorf("%s: HTTP %d: %s (the chains' details need an operator's key: --apikey, or PAYHOOK_APIKEY)", where, resp.StatusCode, body.Error)
	case body.Chains == nil && resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusServiceUnavailable:
		return fmt.Errorf("%s: HTTP %d: %s", where, resp.StatusCode, body.Error)
	case body.Chains == nil:
		return fmt.Errorf("%s answered its status only (%s): the chains' details need an operator's key (--apikey, payhook apikey create --operator) or the operator listener's address (serve --operator-listen) as --server", where, body.Status)
	}
	chains := *body.Chains
	if body.Status != "success" {
		fmt.Fprintf(stderr, "payhook at %s reports %s: %s\n", base, body.Status, body.Error)
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(chains)
	}
	tickers := make([]string, 0, len(chains))
	for t := range chains {
		tickers = append(tickers, t)
	}
	sort.Strings(tickers)
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TICKER\tNODE\tNETWORK\tHEAD\tCURSOR\tHEALTH")
	for _, t := range tickers {
		c := chains[t]
		health := "ok"
		if !c.Healthy {
			health = "DOWN: " + c.Error
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%s\n", t, c.Node, c.Network, c.Head, c.Cursor, health)
	}
	return tw.Flush()
}
