// Package schedule is the retry policy of webhook delivery: when the next
// attempt of a notification may start, and when the notification's
// automatic delivery window closes.
//
// Guarantees:
//   - Pure functions of their arguments: no clock, no state, safe for
//     concurrent use. Callers pass the times they read from their own clock.
//   - Each delay counts from the moment the preceding attempt finished, not
//     from when it was due, so a slow or late attempt never shortens the gap
//     the receiver gets.
//   - No attempt is scheduled to start after created+Window. An attempt due
//     exactly at the deadline may start (the boundary is inclusive).
//
// Failure modes: a Policy that fails Validate (no delays, a delay or the
// window not positive) schedules nothing: Next reports ok=false, so the
// notification fails instead of being retried in a tight loop.
package schedule
