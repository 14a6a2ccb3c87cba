package admin

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	entdb "github.com/payhook/payhook/ent/db"
	entproject "github.com/payhook/payhook/ent/db/project"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/internal/clock"
	"github.com/payhook/payhook/internal/kind"
	"github.com/payhook/payhook/server/ledger"
	"github.com/payhook/payhook/server/merchant/project"
)

// ProjectFeesOwed returns what a project's watch-only keys owe the
// operator per coin: fees accrued and settled in [from, to) (zero times
// leave a bound open) and outstanding at to, in coin units.
func ProjectFeesOwed(ctx context.Context, dsn, registryFile string, id int64, from, to time.Time) (out []ledger.FeesOwed, err error) {
	registry, err := LoadRegistry(registryFile)
	if err != nil {
		return nil, err
	}
	err = withMigratedDB(ctx, dsn, func(db *store.DB) error {
		if _, err := project.Get(ctx, db.Client, id); err != nil {
			return err
		}
		fs, err := ledger.OwedFees(ctx, db.Client, id, from, to)
		if err != nil {
			return err
		}
		for _, f := range fs {
			t, ok := registry.Lookup(f.Ticker)
			if !ok {
				return fmt.Errorf("fees owed in %s: the coin is not in this server's registry", f.Ticker)
			}
			f.Accrued, f.Settled, f.Outstanding = ledger.Coins(t, f.Accrued), ledger.Coins(t, f.Settled), ledger.Coins(t, f.Outstanding)
			out = append(out, f)
		}
		return nil
	})
	return out, err
}

// errSettle is the kind of a refused settlement.
var errSettle = kind.New(kind.Invalid, "settle")

// SettleProjectFees records amount (coin units) of a project's fees owed
// in ticker as paid outside payhook under the operator's reference (their
// invoice's number): journaled owed +amount, settled -amount, in one
// transaction that refuses more than is outstanding. A reference settles
// once per project (a second run of the same command is refused, not
// counted twice). Audited as fees.settle on the reference.
func SettleProjectFees(ctx context.Context, dsn, registryFile string, id int64, ticker, amount, reference string) error {
	registry, err := LoadRegistry(registryFile)
	if err != nil {
		return err
	}
	t, ok := registry.Lookup(strings.Replace(strings.ToLower(strings.TrimSpace(ticker)), "_", "/", 1))
	if !ok {
		return fmt.Errorf("%w: --ticker: unknown coin %q", errSettle, ticker)
	}
	v, err := decimal.NewFromString(strings.TrimSpace(amount))
	if err != nil || !v.IsPositive() || v.Exponent() < -t.Decimals {
		return fmt.Errorf("%w: --amount: %q is not a positive amount of %s with at most %d decimals", errSettle, amount, t.Ticker, t.Decimals)
	}
	reference = strings.TrimSpace(reference)
	if reference == "" || len(reference) > 100 {
		return fmt.Errorf("%w: --reference: give the invoice's reference, 1 to 100 characters", errSettle)
	}
	return withMigratedDB(ctx, dsn, func(db *store.DB) error {
		err := store.WithTx(ctx, db.Client, func(tx *entdb.Tx) error {
			// Two settlements of one project wait for each other, so
			// together they never settle more than is owed.
			q := tx.Project.Query().Where(entproject.ID(id))
			if db.Dialect == store.Postgres {
				q.ForUpdate()
			}
			if _, err := q.Only(ctx); entdb.IsNotFound(err) {
				return fmt.Errorf("%w: %d", project.ErrNotFound, id)
			} else if err != nil {
				return err
			}
			fees, err := ledger.OwedFees(ctx, tx.Client(), id, time.Time{}, time.Time{})
			if err != nil {
				return err
			}
			owed := decimal.Zero
			for _, f := range fees {
				if f.Ticker == t.Ticker {
					owed = ledger.Coins(t, f.Outstanding)
				}
			}
			if v.GreaterThan(owed) {
				return fmt.Errorf("%w: --amount: %s %s is more than the %s %s project %d owes", errSettle, v, t.Ticker, owed, t.Ticker, id)
			}
			err = ledger.Write(ctx, tx, db.Dialect, clock.Now(), ledger.Settle(t, id, v, reference))
			if store.IsConstraintError(err) {
				return fmt.Errorf("%w: --reference: %q was settled already for project %d", errSettle, reference, id)
			}
			return err
		})
		if err != nil {
			return err
		}
		recordDone(ctx, db.Client, id, "fees.settle", reference)
		return nil
	})
}
