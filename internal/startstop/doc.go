// Package startstop is the one Start/Stop shape of payhook's long-running
// parts (the server, the notifier's dispatcher and event listener, the
// chain watchers, live prices, the devnet's miner, the benchmark engine):
// each embeds a Base and writes its Start and, when it has shutdown work of
// its own, its Stop on top of it.
//
// # Guarantees
//
//   - A part runs once. Its first Start marks it started; a second Start,
//     or a Start after Stop, returns ErrStarted and changes nothing. A Start
//     whose context has already ended returns that context's error and
//     leaves the part as it was.
//   - Start returns once the part runs. The context the part runs on
//     (StartInit's result) carries the values of Start's context but not
//     its cancellation: Start's context bounds starting only, and Stop ends
//     the part. Once Stop begins, that context is cancelled with the cause
//     ErrStopped (context.Cause), the one stop cause of every part.
//   - Stop is idempotent and waits: the first call cancels, runs the part's
//     shutdown and returns when it is done; every other call, concurrent or
//     later, returns only then. Stop without Start is allowed (it still runs
//     the shutdown, which releases what the constructor took) and the part
//     then never starts.
//   - Every goroutine a part starts with Go has an owner and a visible exit:
//     the default shutdown waits for all of them.
//
// River's startstop package is the model; unlike River's services, a part
// here does not restart after Stop, and Stop always runs the shutdown once.
package startstop
