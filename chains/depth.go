package chains

// DepthRules is the lifecycle the depth-based families share (UTXO, EVM,
// TRON); they differ only in whether execution is checked and in when a
// credited payment may be distributed.
type DepthRules struct {
	// CheckExecution makes a failed execution (Executed false, in a block)
	// reverted: recorded, never credited, no callback, final.
	CheckExecution bool
	// Distributable reports whether a credited payment may be forwarded at
	// the observed depth and state; nil means as soon as it is in a block.
	Distributable func(depth int64, s TxState) bool
}

// Evaluate applies one observation. A transfer is reported once in a block
// (depth 0 gives no status); below required depth it is pending, with a
// callback for the first sighting and for each higher count; at required
// depth it is confirmed and credited, once. A transaction no longer Present
// before credit is dropped (recorded, no callback) and evaluated afresh when
// it is in a block again. After credit the status never changes; only
// Forwardable follows the current observation. Counters never decrease.
func (r DepthRules) Evaluate(required int64, prev PaymentState, s TxState) Step {
	depth := s.Confirmations
	if !s.Present || depth < 0 {
		depth = 0
	}
	conf := max(prev.Confirmations, depth)
	inBlock := depth >= 1
	executed := s.Executed || !r.CheckExecution
	distributable := inBlock && executed && (r.Distributable == nil || r.Distributable(depth, s))

	switch prev.Status {
	case StatusConfirmed, StatusCompleted:
		return Step{Status: prev.Status, Confirmations: conf, Forwardable: distributable}
	case StatusNone, StatusPending, StatusDropped:
		// Not credited yet: evaluated below.
	default:
		// Reverted is final; a status this package does not know is left
		// alone.
		return Step{Status: prev.Status, Confirmations: conf}
	}

	switch {
	case !s.Present:
		return Step{Status: StatusDropped, Confirmations: conf}
	case !inBlock:
		// Mempool: not reported, and no receipt to check yet. Pending stays
		// pending (a reorganisation put it back in the mempool).
		return Step{Status: prev.Status, Confirmations: conf}
	case !executed:
		return Step{Status: StatusReverted, Confirmations: conf}
	case depth >= max(required, 1):
		return Step{Status: StatusConfirmed, Confirmations: conf, Notify: true, Credit: true, Forwardable: distributable}
	default:
		return Step{
			Status:        StatusPending,
			Confirmations: conf,
			Notify:        prev.Status != StatusPending || conf > prev.Confirmations,
		}
	}
}
