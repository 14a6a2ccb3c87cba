package migrations

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/pressly/goose/v3"
	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/ent/schema"
)

// TypedStateVersion is the version of the data migration that turns the
// free-text state of payments and forwards into typed rows: it runs after
// 20261127230000 added the columns and tables, and before 20261127230200
// makes (project, ticker, callback) unique and drops the forwards' sending
// columns.
const TypedStateVersion = 20261127230100

// Go returns the migrations written in Go, for a PostgreSQL database when
// postgres is set and SQLite otherwise; decimals converts amounts to base
// units for the ledger's opening entries (nil fails that migration when
// there is anything to journal). store.Migrate runs them with the SQL files,
// in version order.
func Go(postgres bool, decimals Decimals) []*goose.Migration {
	return []*goose.Migration{
		goose.NewGoMigration(TypedStateVersion, &goose.GoFunc{RunTx: func(ctx context.Context, tx *sql.Tx) error {
			return typedState(ctx, tx, postgres)
		}}, nil),
		goose.NewGoMigration(LedgerOpeningVersion, &goose.GoFunc{RunTx: func(ctx context.Context, tx *sql.Tx) error {
			return ledgerOpening(ctx, tx, decimals)
		}}, nil),
		goose.NewGoMigration(PayoutRequestsVersion, &goose.GoFunc{RunTx: payoutRequests}, nil),
	}
}

// PayoutRequestsVersion is the version of the data migration that moves the
// payout requests recorded before payouts existed into their model: it runs
// after 20261128123008 added payouts and the requests' project and status.
const PayoutRequestsVersion = 20261128123009

// payoutRequests: a request recorded for the operator to pay by hand
// ("requested") is a pending request, of its key's project.
func payoutRequests(ctx context.Context, tx *sql.Tx) error {
	if _, err := tx.ExecContext(ctx, `UPDATE payout_requests SET status = 'pending' WHERE status = 'requested'`); err != nil {
		return fmt.Errorf("payout requests: status: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE payout_requests SET project_id = (SELECT api_keys.project_id FROM api_keys WHERE api_keys.id = payout_requests.api_key_id)`); err != nil {
		return fmt.Errorf("payout requests: project: %w", err)
	}
	return nil
}

// The notes the code before TypedStateVersion wrote, and decided on. This is
// the one place that still reads them: to derive the typed columns once.
const (
	notForwardedNote   = "not forwarded: "
	heldForMinimumNote = "held for the minimum: credited, too small to forward alone"
	reorgedNote        = "left the chain after it was credited (reorganisation)"
)

// typedState derives the typed state from what the earlier schema kept:
//
//  1. payments.hold_reason: below_minimum for a low-level payment noted
//     "not forwarded: ..." and for a merchant payment noted as held for the
//     minimum that has no forward yet; no_wallet for a payment whose forward
//     is held. payments.reorged (and reorg_count 1) for a payment noted as
//     having left the chain after its credit.
//  2. One outbounds row per forwarding transaction (the forwards sharing a
//     broadcast key: one payment's, or a merchant address's group), with its
//     inputs, outputs, network fee, signed bytes, hash and state; each of
//     its forwards points to it.
//  3. Addresses that share (project, ticker, callback key) — possible while
//     the unique index was per API key — keep the oldest as the one a create
//     finds (as lookups already did); the others get a callback key of their
//     own (their id in hex), so the next migration's unique index holds.
//     Their callbacks and payments are untouched.
//
// The ledger's opening entries are the next migration's
// (LedgerOpeningVersion).
func typedState(ctx context.Context, tx *sql.Tx, postgres bool) error {
	truth := "1"
	if postgres {
		truth = "true"
	}
	for _, q := range []string{
		`UPDATE payments SET hold_reason = 'below_minimum' WHERE note LIKE '` + notForwardedNote + `%'`,
		`UPDATE payments SET hold_reason = 'below_minimum' WHERE status = 'confirmed' AND note LIKE '%` + heldForMinimumNote + `%'
			AND NOT EXISTS (SELECT 1 FROM forwards f WHERE f.payment_id = payments.id)`,
		`UPDATE payments SET hold_reason = 'no_wallet' WHERE EXISTS (SELECT 1 FROM forwards f WHERE f.payment_id = payments.id AND f.held = ` + truth + `)`,
		`UPDATE payments SET reorged = ` + truth + `, reorg_count = 1 WHERE note LIKE '%` + reorgedNote + `%'`,
	} {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("typed payment state: %w", err)
		}
	}
	if err := outbounds(ctx, tx, postgres); err != nil {
		return err
	}
	hexID := "printf('%064x', a.id)"
	if postgres {
		hexID = "lpad(to_hex(a.id), 64, '0')"
	}
	if _, err := tx.ExecContext(ctx, `UPDATE addresses AS a SET callback_key = `+hexID+`
		WHERE EXISTS (SELECT 1 FROM addresses b WHERE b.project_id = a.project_id AND b.ticker = a.ticker
			AND b.callback_key = a.callback_key AND b.id < a.id)`); err != nil {
		return fmt.Errorf("addresses sharing a callback: %w", err)
	}
	return nil
}

// legacyForward is a forwards row as the earlier schema kept it, with its
// payment and address.
type legacyForward struct {
	id, paymentID             int64
	intentID, status, txidOut string
	outputs                   []schema.Output
	networkFee                decimal.Decimal
	signedTx                  []byte
	landedAt                  sql.NullTime
	createdAt, updatedAt      time.Time
	ticker, txidIn, addressIn string
	outputIndex, derivation   int64
	projectID                 int64
	valueCoin                 decimal.Decimal
}

// outbounds writes one outbounds row per forwarding transaction of the
// forwards that are not held (step 2 of typedState).
func outbounds(ctx context.Context, tx *sql.Tx, postgres bool) error {
	notHeld := "f.held = 0"
	if postgres {
		notHeld = "NOT f.held"
	}
	rows, err := tx.QueryContext(ctx, `SELECT f.id, f.payment_id, f.intent_id, f.status, f.txid_out, f.outputs, f.network_fee,
			f.signed_tx, f.landed_at, f.created_at, f.updated_at,
			p.ticker, p.txid_in, p.output_index, p.value_coin, a.address_in, a.derivation_index, a.project_id
		FROM forwards f JOIN payments p ON p.id = f.payment_id JOIN addresses a ON a.id = p.address_id
		WHERE `+notHeld+` ORDER BY f.id`)
	if err != nil {
		return fmt.Errorf("read forwards: %w", err)
	}
	var fs []legacyForward
	for rows.Next() {
		var (
			f             legacyForward
			outs          []byte
			netFee, value string
		)
		if err := rows.Scan(&f.id, &f.paymentID, &f.intentID, &f.status, &f.txidOut, &outs, &netFee,
			&f.signedTx, &f.landedAt, &f.createdAt, &f.updatedAt,
			&f.ticker, &f.txidIn, &f.outputIndex, &value, &f.addressIn, &f.derivation, &f.projectID); err != nil {
			rows.Close()
			return fmt.Errorf("read forwards: %w", err)
		}
		if err := json.Unmarshal(outs, &f.outputs); err != nil {
			rows.Close()
			return fmt.Errorf("forward %d outputs: %w", f.id, err)
		}
		if f.networkFee, err = decimal.NewFromString(netFee); err != nil {
			rows.Close()
			return fmt.Errorf("forward %d network fee: %w", f.id, err)
		}
		if f.valueCoin, err = decimal.NewFromString(value); err != nil {
			rows.Close()
			return fmt.Errorf("payment %d value: %w", f.paymentID, err)
		}
		fs = append(fs, f)
	}
	if err := rows.Close(); err != nil {
		return err
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read forwards: %w", err)
	}
	var keys []string
	groups := map[string][]legacyForward{}
	for _, f := range fs {
		// "fwd-<payment>-<txid>" alone, "fwd-<last>-<txid>/<payment>" in a
		// group: the part before "/" is the transaction's key.
		k, _, _ := strings.Cut(f.intentID, "/")
		if groups[k] == nil {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], f)
	}
	for _, k := range keys {
		if err := insertOutbound(ctx, tx, k, groups[k]); err != nil {
			return err
		}
	}
	return nil
}

// insertOutbound writes the outbounds row of the forwards g (one
// transaction's, in id order) under key k and points them to it.
func insertOutbound(ctx context.Context, tx *sql.Tx, k string, g []legacyForward) error {
	first := g[0]
	var (
		inputs  []schema.Transfer
		outputs []schema.Output
		netFee  = decimal.Zero
		signed  []byte
		txid    string
		open    bool
		landed  sql.NullTime
		created = first.createdAt
		updated = first.updatedAt
	)
	at := map[string]int{}
	for _, f := range g {
		inputs = append(inputs, schema.Transfer{TxID: f.txidIn, Index: f.outputIndex, To: f.addressIn, Value: f.valueCoin})
		for _, o := range f.outputs {
			i, ok := at[o.Address]
			if !ok {
				i = len(outputs)
				at[o.Address] = i
				outputs = append(outputs, schema.Output{Address: o.Address, Amount: decimal.Zero})
			}
			outputs[i].Amount = outputs[i].Amount.Add(o.Amount)
		}
		netFee = netFee.Add(f.networkFee)
		if signed == nil && len(f.signedTx) > 0 {
			signed = f.signedTx
		}
		if txid == "" {
			txid = f.txidOut
		}
		open = open || f.status == "intent"
		if f.landedAt.Valid && (!landed.Valid || f.landedAt.Time.After(landed.Time)) {
			landed = f.landedAt
		}
		if f.createdAt.Before(created) {
			created = f.createdAt
		}
		if f.updatedAt.After(updated) {
			updated = f.updatedAt
		}
	}
	state, sends := "sent", 1
	var sentAt sql.NullTime
	switch {
	case open && signed != nil:
		state, sends = "signed", 0
	case open:
		state, sends = "planned", 0
	case landed.Valid:
		state = "landed"
	}
	if !open {
		sentAt = sql.NullTime{Time: updated, Valid: true}
	}
	in, err := json.Marshal(inputs)
	if err != nil {
		return err
	}
	out, err := json.Marshal(slices.DeleteFunc(outputs, func(o schema.Output) bool { return o.Amount.Sign() == 0 }))
	if err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO outbounds (created_at, updated_at, key, ticker, purpose, project_id,
			from_address, from_index, inputs, outputs, network_fee, state, signed_tx, txid, sends, last_error, sent_at, landed_at)
		VALUES ($1, $2, $3, $4, 'forward', $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, '', $15, $16)`,
		created, updated, k, first.ticker, first.projectID, first.addressIn, first.derivation,
		string(in), string(out), netFee.String(), state, signed, txid, sends, sentAt, landed); err != nil {
		return fmt.Errorf("outbound %s: %w", k, err)
	}
	var id int64
	if err := tx.QueryRowContext(ctx, `SELECT id FROM outbounds WHERE key = $1`, k).Scan(&id); err != nil {
		return fmt.Errorf("outbound %s: %w", k, err)
	}
	ids := make([]string, len(g))
	for i, f := range g {
		ids[i] = fmt.Sprint(f.id)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE forwards SET outbound_id = $1 WHERE id IN (`+strings.Join(ids, ", ")+`)`, id); err != nil {
		return fmt.Errorf("outbound %s forwards: %w", k, err)
	}
	return nil
}
