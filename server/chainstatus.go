package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"time"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/ent/db/chaincursor"
	"github.com/payhook/payhook/server/address"
	"github.com/payhook/payhook/server/metrics"
)

// ChainStatus is one ticker's chain as /healthz and payhook chain status
// show it.
type ChainStatus struct {
	// Healthy is false while the node's last poll failed (and before the
	// first poll ended).
	Healthy bool `json:"healthy"`
	// Error is the last poll's error.
	Error string `json:"error,omitempty"`
	// Node is the node's URL without credentials ("devnet" for the
	// simulator).
	Node string `json:"node"`
	// Network is mainnet, testnet, regtest or devnet.
	Network string `json:"network"`
	// Head is the node's tip as last read; Cursor the height processed
	// (durable, shared by every instance).
	Head   int64 `json:"head"`
	Cursor int64 `json:"cursor"`
	// LastPoll is when this instance last polled (RFC 3339; "" before).
	LastPoll string `json:"last_poll,omitempty"`
	// lastPoll is LastPoll as a time, for the metrics.
	lastPoll time.Time
	// PollErrors counts this instance's failed polls.
	PollErrors uint64 `json:"poll_errors"`
	// Watching is true on the one instance that watches and forwards the
	// ticker (it holds the ticker's lease in the database).
	Watching bool `json:"watching"`
}

// ChainStatuses returns the status of every watched ticker.
func (s *Server) ChainStatuses(ctx context.Context) map[string]ChainStatus {
	out := make(map[string]ChainStatus, len(s.watchers))
	cursors := map[string]int64{}
	if cs, err := s.db.Client.ChainCursor.Query().All(ctx); err == nil {
		for _, c := range cs {
			cursors[c.Ticker] = c.Height
		}
	}
	nodes := map[string]node{}
	for _, n := range s.nodes {
		nodes[n.ticker] = n
	}
	for ticker, w := range s.watchers {
		h := w.Health()
		st := ChainStatus{Healthy: h.Healthy, Error: h.Error, Head: h.Head, Cursor: max(h.Cursor, cursors[ticker]),
			PollErrors: h.Errors, Node: "devnet", Network: "devnet", Watching: h.Watching}
		if n, ok := nodes[ticker]; ok {
			st.Node, st.Network = n.endpoint, chains.Net(n.net).String()
		}
		if !h.Polled {
			st.Error = "not polled yet"
		}
		if !h.LastPoll.IsZero() {
			st.lastPoll, st.LastPoll = h.LastPoll, h.LastPoll.UTC().Format(time.RFC3339)
		}
		out[ticker] = st
	}
	return out
}

// chainReady refuses addresses of a node's ticker until its watcher has
// recorded where watching starts (the cursor, on any instance): a payment
// to an address handed out earlier could land below that start.
func (s *Server) chainReady(ctx context.Context, ticker string) error {
	isNode := false
	for _, n := range s.nodes {
		isNode = isNode || n.ticker == ticker
	}
	if !isNode {
		return nil
	}
	ok, err := s.db.Client.ChainCursor.Query().Where(chaincursor.Ticker(ticker)).Exist(ctx)
	if err != nil {
		return fmt.Errorf("%s cursor: %w", ticker, err)
	}
	if !ok {
		return fmt.Errorf("%w: %s (see /healthz)", address.ErrChainNotReady, ticker)
	}
	return nil
}

// chainStats feeds the chain metrics.
func (s *Server) chainStats() []metrics.ChainStat {
	ctx, cancel := context.WithTimeout(context.Background(), metrics.StatsTimeout)
	defer cancel()
	pending, sent := map[string]int64{}, map[string]int64{}
	rows, err := s.db.SQL.QueryContext(ctx, `SELECT p.ticker, f.status, count(*) FROM forwards f JOIN payments p ON p.id = f.payment_id WHERE f.held = false GROUP BY p.ticker, f.status`)
	if err == nil {
		defer rows.Close()
		for rows.Next() {
			var t, st string
			var n int64
			if rows.Scan(&t, &st, &n) == nil {
				if st == "intent" {
					pending[t] = n
				} else {
					sent[t] = n
				}
			}
		}
	}
	var out []metrics.ChainStat
	for ticker, st := range s.ChainStatuses(ctx) {
		out = append(out, metrics.ChainStat{Ticker: ticker, Up: st.Healthy, Head: st.Head, Cursor: st.Cursor, LastPoll: st.lastPoll,
			PollErrors: st.PollErrors, ForwardsPending: pending[ticker], ForwardsSent: sent[ticker]})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Ticker < out[j].Ticker })
	return out
}

// healthBody is /healthz's answer to anyone (and the body of its and
// /metrics' refusals).
type healthBody struct {
	Status string `json:"status"`
	Health string `json:"health,omitempty"`
	Error  string `json:"error,omitempty"`
}

// healthDetails is /healthz's answer to the operator: the status, why it is
// degraded, and every watched chain (an empty object when there is none).
type healthDetails struct {
	healthBody
	Reason string                 `json:"reason,omitempty"` // why health is degraded
	Chains map[string]ChainStatus `json:"chains"`
}

func writeHealth(w http.ResponseWriter, code int, b any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(b)
}
