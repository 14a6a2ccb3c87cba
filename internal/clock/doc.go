// Package clock is the one place payhook reads the wall clock (design.md:
// time is injected).
//
// Everything else takes a clock, a func() time.Time (usually a Config.Now
// field), and defaults it to Now, or to UTC where its readings are stored or
// shown; tests inject a Manual's Now method. golangci-lint's forbidigo rule
// (.golangci.yml) refuses time.Now anywhere but here, so a test that sets
// the clock sets every timestamp the code under test takes.
//
// # Guarantees
//
//   - Now keeps the monotonic reading of time.Now: time.Since, Sub and
//     deadlines between two of its readings measure elapsed time even when
//     the wall clock is stepped. UTC drops it (time.Time.UTC does), as its
//     readings are meant for storage and display, not for measuring.
//   - A Manual never moves by itself: it reads what it was set to until Set
//     or Advance moves it. It is safe for concurrent use.
//   - The package imports the standard library only, so every layer
//     (chains, notifier, ent/store, server, cmd) may use it; receiver, which
//     merchants import and which imports the standard library only, keeps
//     its own default (time.Now) instead.
package clock
