package migrations

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"
)

// LedgerOpeningVersion is the version of the data migration that journals
// the ledger's opening entries: what every payment recorded before the
// ledger existed had moved, in the lines server/ledger writes for the same
// events (so later entries continue them). It runs after TypedStateVersion.
const LedgerOpeningVersion = 20261127230150

// Decimals returns a ticker's number of decimals, which converts coin units
// to the ledger's base units; ok is false for a ticker it does not know.
type Decimals func(ticker string) (decimals int32, ok bool)

// openingLine is one ledger line of the opening entries.
type openingLine struct {
	project, payment, address int64
	outbound                  sql.NullInt64
	ticker, event, account    string
	key, reason               string
	units                     decimal.Decimal
	at                        time.Time
}

// ledgerOpening journals, for every payment of the earlier schema: its
// credit (confirmed or completed), its hold (a hold reason), the plan and
// the send of its forward (carried by an outgoing transaction; sent when
// done), and the reversal of a payment that left the chain after its
// credit. These are server/ledger's events and keys as they stood at this
// version; a migration keeps its own copy, as it must not change with the
// code. A payment of a ticker decimals does not know fails the migration,
// naming it.
func ledgerOpening(ctx context.Context, tx *sql.Tx, decimals Decimals) error {
	rows, err := tx.QueryContext(ctx, `SELECT p.id, p.ticker, p.value_coin, p.status, p.hold_reason, p.reorged, p.updated_at,
			a.id, a.project_id, f.outbound_id, f.status, f.value_forwarded_coin, f.fee_coin, f.network_fee
		FROM payments p JOIN addresses a ON a.id = p.address_id
		LEFT JOIN forwards f ON f.payment_id = p.id AND f.outbound_id IS NOT NULL
		WHERE p.status IN ('confirmed', 'completed') ORDER BY p.id`)
	if err != nil {
		return fmt.Errorf("read payments: %w", err)
	}
	var lines []openingLine
	for rows.Next() {
		var (
			id, address, project        int64
			ticker, value, status, hold string
			reorged                     bool
			at                          time.Time
			outbound                    sql.NullInt64
			fstatus, fwd, fee, netFee   sql.NullString
		)
		if err := rows.Scan(&id, &ticker, &value, &status, &hold, &reorged, &at, &address, &project, &outbound, &fstatus, &fwd, &fee, &netFee); err != nil {
			rows.Close()
			return fmt.Errorf("read payments: %w", err)
		}
		if decimals == nil {
			rows.Close()
			return fmt.Errorf("journal the ledger's opening entries: the ticker registry is needed (its decimals convert amounts to base units)")
		}
		dec, ok := decimals(ticker)
		if !ok {
			rows.Close()
			return fmt.Errorf("journal the ledger's opening entries: payment %d is of %s, which the ticker registry lacks: migrate with the registry that has it (--registry-file)", id, ticker)
		}
		units := func(v string) (decimal.Decimal, error) {
			d, err := decimal.NewFromString(v)
			if err != nil {
				return d, fmt.Errorf("payment %d amount %q: %w", id, v, err)
			}
			u := d.Shift(dec)
			if !u.Equal(u.Truncate(0)) {
				return u, fmt.Errorf("payment %d amount %s of %s is not a whole number of base units (%d decimals)", id, v, ticker, dec)
			}
			return u, nil
		}
		v, err := units(value)
		if err != nil {
			rows.Close()
			return err
		}
		pid := strconv.FormatInt(id, 10)
		line := func(event, account, key string, u decimal.Decimal, ob sql.NullInt64) {
			if u.IsZero() {
				return
			}
			l := openingLine{project: project, payment: id, address: address, outbound: ob, ticker: ticker, event: event, account: account, key: key, units: u, at: at}
			if event == "hold" && account == "held" {
				l.reason = hold
			}
			lines = append(lines, l)
		}
		none := sql.NullInt64{}
		line("credit", "received", "credit:"+pid, v.Neg(), none)
		line("credit", "pending", "credit:"+pid, v, none)
		if hold != "none" {
			line("hold", "pending", "hold:"+pid, v.Neg(), none)
			line("hold", "held", "hold:"+pid, v, none)
		}
		if outbound.Valid {
			ob := strconv.FormatInt(outbound.Int64, 10)
			line("plan", "pending", "plan:"+pid+":"+ob, v.Neg(), outbound)
			line("plan", "outgoing", "plan:"+pid+":"+ob, v, outbound)
			if fstatus.String == "done" {
				var parts [3]decimal.Decimal
				for i, s := range []string{fwd.String, fee.String, netFee.String} {
					if parts[i], err = units(s); err != nil {
						rows.Close()
						return err
					}
				}
				key := "send:" + pid + ":" + ob
				line("send", "outgoing", key, parts[0].Add(parts[1]).Add(parts[2]).Neg(), outbound)
				line("send", "forwarded", key, parts[0], outbound)
				line("send", "fee", key, parts[1], outbound)
				line("send", "network_fee", key, parts[2], outbound)
			}
		}
		if reorged {
			line("reversal", "received", "reversal:"+pid+":1", v, none)
			line("reversal", "loss", "reversal:"+pid+":1", v.Neg(), none)
		}
	}
	if err := rows.Close(); err != nil {
		return err
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read payments: %w", err)
	}
	const batch = 200
	for i := 0; i < len(lines); i += batch {
		chunk := lines[i:min(i+batch, len(lines))]
		var sb strings.Builder
		sb.WriteString(`INSERT INTO ledger_entries (created_at, project_id, ticker, event, account, amount, key, payment_id, address_id, outbound_id, hold_reason) VALUES `)
		args := make([]any, 0, len(chunk)*11)
		for j, l := range chunk {
			if j > 0 {
				sb.WriteString(", ")
			}
			sb.WriteString("(")
			for k := range 11 {
				if k > 0 {
					sb.WriteString(", ")
				}
				sb.WriteString("$" + strconv.Itoa(len(args)+k+1))
			}
			sb.WriteString(")")
			var reason any
			if l.reason != "" {
				reason = l.reason
			}
			args = append(args, l.at, l.project, l.ticker, l.event, l.account, l.units.String(), l.key, l.payment, l.address, l.outbound, reason)
		}
		if _, err := tx.ExecContext(ctx, sb.String(), args...); err != nil {
			return fmt.Errorf("journal the ledger's opening entries: %w", err)
		}
	}
	return nil
}
