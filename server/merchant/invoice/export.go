package invoice

import (
	entdb "github.com/payhook/payhook/ent/db"
)

// States returns what the status rules need of stored payments, leaving
// out those that do not count (dropped, reverted, held as late for a
// refund).
func States(pays []*entdb.Payment) []PaymentState {
	out := make([]PaymentState, 0, len(pays))
	for _, p := range pays {
		if countsToward(p) {
			out = append(out, stateOf(p))
		}
	}
	return out
}
