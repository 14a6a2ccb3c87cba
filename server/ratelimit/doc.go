// Package ratelimit holds payhook's request limits and quotas: token
// buckets kept in the database (the rate_buckets table), so that every
// instance on one PostgreSQL draws from the same bucket.
//
//   - Per API key: every authenticated call (gRPC, REST, Connect and
//     gRPC-Web, which all reach the gRPC server) takes a token of its key's
//     bucket: Limits.KeyRate per second with a burst of Limits.KeyBurst, or
//     the project's rate_limit and rate_burst when the operator set them.
//   - Per client network (an IPv4 /24, an IPv6 /64): every anonymous call
//     takes a token of its network's bucket (Limits.AnonRate, AnonBurst):
//     the hosted pages and their status.json (Limiter.HTTP, in front of
//     the pages) and the methods without a key (PUBLIC and DEVNET, in the
//     gRPC interceptor). The client's address is the connection's peer,
//     or the X-Forwarded-For hop a --trusted-proxy vouches for.
//   - Test webhooks: Limits.TestEvents per project and day
//     (Limiter.TestEvent, asked by the notification service).
//
// A refused call is answered ResourceExhausted (HTTP 429) with Retry-After
// and the RateLimit-Limit, RateLimit-Remaining and RateLimit-Reset headers
// (gRPC: the same names as metadata, in the trailer, and a RetryInfo
// detail); an allowed one carries the RateLimit-* headers (gRPC: header
// metadata).
//
// Guarantees: one take is one SQL statement (an upsert that refills the
// bucket by the time passed on the injected clock and takes a token when it
// holds one), so concurrent instances never lose or double a token; a
// bucket that is not there is full. A refusal reads the bucket once more to
// say when to come back, and the instance then refuses that bucket from
// memory until then (no token can appear sooner), so a flood costs the
// database about one statement per refill. A bucket untouched for a day is
// full and is deleted (at most PruneBatch rows a minute per instance).
//
// Failure modes: a take that fails (the database is down) fails the call
// with the database's error, as the call itself would have. The caps on
// hosted-page addresses are the invoice and subscription services'
// (invoice.Config.HostedAddresses, subscription.Config.HostedAddresses);
// this package only carries their settings.
package ratelimit
