package signer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"

	"github.com/btcsuite/btcd/txscript"
	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/utxo"
)

// PolicyFile is the policy file's JSON:
//
//	{
//	  "networks": {"ltc": "regtest"},
//	  "projects": [
//	    {"project": 1, "ticker": "ltc",
//	     "destinations": ["rltc1q..."], "daily_cap": "1.5"}
//	  ]
//	}
//
// networks gives a ticker's network (mainnet when absent); each project
// entry lists the addresses its transactions of the ticker may pay
// (forwards, payouts, sweeps and refunds alike: the purpose a server
// claims is not proof) and the most that may leave in a UTC day, a decimal
// string in coin units. A project and ticker without an entry signs
// nothing. Change to the seed's own keys is always allowed and never
// counted.
type PolicyFile struct {
	// Networks maps tickers to mainnet, testnet or regtest.
	Networks map[string]string `json:"networks"`
	// Projects are the rules, one per project and ticker.
	Projects []ProjectRule `json:"projects"`
}

// ProjectRule is what one project may send of one ticker.
type ProjectRule struct {
	// Project is the project's id (payhook project list).
	Project int64 `json:"project"`
	// Ticker is the coin.
	Ticker string `json:"ticker"`
	// Destinations are the addresses its transactions may pay.
	Destinations []string `json:"destinations"`
	// DailyCap is the most that may leave a day, in coin units.
	DailyCap string `json:"daily_cap"`
}

// Policy is a loaded policy file: what the signer signs.
type Policy struct {
	nets  map[string]chains.Net
	rules map[ruleKey]*rule
}

type ruleKey struct {
	project int64
	ticker  string
}

type rule struct {
	cap     decimal.Decimal
	scripts [][]byte
	addrs   []string
}

// LoadPolicy reads a policy file (PolicyFile) and checks it against
// registry: known tickers of the UTXO family (the only one signed remotely
// yet), destinations valid on the ticker's network, positive caps. Errors
// name the entry at fault.
func LoadPolicy(r io.Reader, registry *chains.Registry) (*Policy, error) {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	var f PolicyFile
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("policy: %w", err)
	}
	if dec.More() {
		return nil, errors.New("policy: more than one JSON value")
	}
	p := &Policy{nets: map[string]chains.Net{}, rules: map[ruleKey]*rule{}}
	for name, n := range f.Networks {
		net := chains.Net(n)
		if _, ok := registry.Lookup(name); !ok {
			return nil, fmt.Errorf("policy: networks: unknown ticker %q", name)
		}
		if !net.Valid() || net == "" {
			return nil, fmt.Errorf("policy: networks: %s: %q, want mainnet, testnet or regtest", name, n)
		}
		p.nets[name] = net
	}
	for i, e := range f.Projects {
		where := fmt.Sprintf("policy: projects[%d] (project %d, %s)", i, e.Project, e.Ticker)
		t, err := p.ticker(registry, e.Ticker)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		if e.Project < 0 {
			return nil, fmt.Errorf("%s: project must not be negative", where)
		}
		k := ruleKey{e.Project, t.Ticker}
		if p.rules[k] != nil {
			return nil, fmt.Errorf("%s: a second entry for the project and ticker", where)
		}
		c, err := decimal.NewFromString(e.DailyCap)
		if err != nil || c.Sign() <= 0 || !c.Shift(t.Decimals).IsInteger() {
			return nil, fmt.Errorf("%s: daily_cap %q: want a positive amount of %s in at most %d decimals", where, e.DailyCap, t.Ticker, t.Decimals)
		}
		r := &rule{cap: c}
		for _, a := range e.Destinations {
			s, err := outputScript(t, a)
			if err != nil {
				return nil, fmt.Errorf("%s: destination %q: %w", where, a, err)
			}
			r.scripts, r.addrs = append(r.scripts, s), append(r.addrs, a)
		}
		p.rules[k] = r
	}
	return p, nil
}

// ticker returns name from registry on the policy's network for it, of
// the UTXO family.
func (p *Policy) ticker(registry *chains.Registry, name string) (chains.Ticker, error) {
	t, ok := registry.Lookup(name)
	if !ok {
		return chains.Ticker{}, fmt.Errorf("unknown ticker %q", name)
	}
	if !isUTXO(t) {
		return chains.Ticker{}, fmt.Errorf("%w: %s: the remote signer signs only the utxo family yet", chains.ErrSignerUnsupported, name)
	}
	net := p.nets[t.Ticker]
	if net == "" {
		net = chains.Mainnet
	}
	r, err := registry.WithNet(t.Ticker, net)
	if err != nil {
		return chains.Ticker{}, err
	}
	t, _ = r.Lookup(t.Ticker)
	return t, nil
}

// outputScript returns the locking script paying addr on t's network.
func outputScript(t chains.Ticker, addr string) ([]byte, error) {
	if err := chains.ValidateAddress(t, addr); err != nil {
		return nil, err
	}
	a, err := utxo.DecodeAddress(t, addr)
	if err != nil {
		return nil, err
	}
	return txscript.PayToAddrScript(a)
}

// leaving checks the outputs of tx that do not pay the seed's own keys
// (own) against the rule of (project, t) and returns their sum in coin
// units. Errors wrap chains.ErrSignerRefused.
func (p *Policy) leaving(t chains.Ticker, project int64, outs []output) (decimal.Decimal, *rule, error) {
	r := p.rules[ruleKey{project, t.Ticker}]
	if r == nil {
		return decimal.Zero, nil, fmt.Errorf("%w: project %d has no %s policy: the signer signs nothing of it", chains.ErrSignerRefused, project, t.Ticker)
	}
	sum := decimal.Zero
	for i, o := range outs {
		if o.own {
			continue
		}
		if !slices.ContainsFunc(r.scripts, func(s []byte) bool { return bytes.Equal(s, o.script) }) {
			return decimal.Zero, nil, fmt.Errorf("%w: output %d pays %s, which project %d's %s policy does not allow (allowed: %s)",
				chains.ErrSignerRefused, i, scriptName(t, o.script), project, t.Ticker, quoteAll(r.addrs))
		}
		sum = sum.Add(decimal.New(o.value, -t.Decimals))
	}
	return sum, r, nil
}

// output is one output of a transaction to sign, as the policy sees it.
type output struct {
	script []byte
	value  int64
	own    bool
}

// scriptName is the address script pays on t's network, or the script
// in hex.
func scriptName(t chains.Ticker, script []byte) string {
	if params, ok := utxo.Params(t); ok {
		if _, addrs, _, err := txscript.ExtractPkScriptAddrs(script, params); err == nil && len(addrs) == 1 {
			if a, ok := utxo.EncodeAddress(t, addrs[0]); ok {
				return a
			}
		}
	}
	return fmt.Sprintf("script %x", script)
}

func quoteAll(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	out := ""
	for i, a := range s {
		if i > 0 {
			out += ", "
		}
		out += strconv.Quote(a)
	}
	return out
}

// isUTXO reports whether t is of the UTXO family (the only one signed
// remotely yet), by its rules (server/ never compares family names).
func isUTXO(t chains.Ticker) bool {
	_, ok := t.Rules().(utxo.Family)
	return ok
}
