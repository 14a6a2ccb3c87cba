// Package dashboard serves the merchant's dashboard at /dashboard/.
//
// A user created by the operator (CreateUser, which `payhook user create`
// calls through the server package) signs in with an email and password
// (argon2id hash) and sees one project. Sessions are rows holding the
// SHA-256 of the cookie's random token; every POST carries the session's
// CSRF token (the sign-in form a double-submit one) and is refused with
// 403 without it; five wrong passwords lock a user for LockoutDuration, a
// client network that fails SigninFailuresPerIP sign-ins waits
// SigninFailureRefill per further attempt (429), and every failed sign-in
// gets the same answer. Every query is scoped by the session's project:
// another project's notification, checkout, deposit, subscription or API
// key is a 404, as an unknown one. Resends, test webhooks, wallets and keys
// go through the same services as the API and the CLI. Pages: activity
// (deliveries per hour by outcome and attempt latency over 48 hours,
// server-rendered SVG), notifications (one with its payload, the headers
// each attempt sent as recorded, and its attempts), checkouts, deposits and
// subscriptions with their payments and invoice_status, webhook endpoints
// (list, create, edit, pause and resume, test, replay, secret rotation,
// recent deliveries; a banner on every page while one is paused), the
// accounting export (a streamed CSV or JSON download of the ledger), and
// settings (among them the hosted pages' colour, support contact and logo,
// and payout wallets: addresses, or the merchant's own key as a watch-only
// wallet with its first addresses and gap-limit warning: watch.go), and
// payouts (approval; a payout from the merchant's key waiting for their
// signature, its PSBT downloaded and the signed one uploaded: psbt.go).
// /dashboard/events is a server-sent-event stream of the project's delivery
// events (the same database-backed stream as WatchDeliveries; Last-Event-ID
// resumes it); it ends when the session does and when the server stops.
//
// Each user has a role in the project (owner, developer, viewer: roles.go).
// Owners also see the Team page (users, invitations by email, the
// two-factor policy) and the audit log (server/audit; CSV export). A user
// may enrol TOTP two-factor sign-in (totp.go); sign-in then asks for a code
// after the password, and sensitive changes for the password or a code
// again after DefaultReauthWindow.
//
// Guarantees:
//   - Every route of a signed-in session is declared in one table with the
//     least role that may use it; a request matching none is refused
//     before any handler runs. A session owing its TOTP code or its
//     enrolment reaches only those pages.
//   - A disabled user has no session and cannot sign in; an invitation's
//     link works once, until it expires or is withdrawn; a TOTP code is
//     accepted once; recovery codes, invitation and session tokens are
//     stored as hashes, the TOTP key sealed (ent/store).
//   - Cookies are HttpOnly, SameSite=Lax, scoped to /dashboard/, and Secure
//     over TLS or when the configured public URL is https (TLS ending in a
//     proxy). The database never holds a session token, only its hash.
//   - A sign-in costs one password check whether the email exists or not;
//     at most MaxConcurrentPasswordChecks run at once (a sign-in beyond
//     them is a 503), so a flood cannot exhaust memory.
//   - Live streams are bounded in all (Config.MaxLiveStreams), per session
//     and per project; a client that stops reading is cut after a write
//     timeout.
//   - Every response carries the headers of web.Secure; every value is
//     rendered by html/template; a secret or API key just made is shown on
//     that response only (no-store, never in a URL or a log). A refused
//     wallet key, or a private key typed among addresses, is never echoed.
//   - A POST body is URL-encoded and at most MaxFormBytes, refused by its
//     type before a byte is read otherwise; the two exceptions are the
//     uploads, the logo (settings/logo) and a payout's signed PSBT
//     (payouts/ID/psbt), multipart bodies of at most MaxUploadBytes read
//     in memory by mime/multipart's streaming reader, never with
//     ParseMultipartForm, so no upload ever reaches a temporary file.
//   - The pages are complete HTML and forms; the script (embedded with the
//     stylesheet, Assets, served by web.Assets) only adds the live updates.
package dashboard
