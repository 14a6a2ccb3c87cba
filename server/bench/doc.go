// Package bench is the database side of payhook-bench (cmd/payhook-bench):
// what the benchmark needs from payhook's storage and delivery engine, so
// that the command itself imports no ent package. It creates and drops
// scratch databases, runs the notifier over one with its Prometheus
// /metrics served on a loopback listener (as payhook serves it), stores
// benchmark callbacks through the same Enqueue the payment code calls,
// stamping the instant each transaction's COMMIT returned, prefills large
// queues in bulk, waits until a dead endpoint's backlog is parked, and reads
// the attempt log.
//
// It is never imported by the production binary: arch_test.go fails when
// cmd/payhook depends on it.
//
// Failure modes: a scratch PostgreSQL database is created with CREATE
// DATABASE on the server the benchmark is given and dropped WITH (FORCE) by
// ScratchDB.Drop; a process killed before that leaves a database named
// payhook_bench_<hex> behind. A scratch SQLite database is a file in a
// temporary directory, removed the same way.
package bench
