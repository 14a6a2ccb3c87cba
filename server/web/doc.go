// Package web serves the dashboard (/dashboard/) and the hosted pages a
// customer opens.
//
// The dashboard: a user created by the operator (CreateUser) signs in with
// an email and password (argon2id hash) and sees one project. Sessions are
// rows holding the SHA-256 of the cookie's random token; every POST carries
// the session's CSRF token (the sign-in form a double-submit one) and is
// refused with 403 without it; five wrong passwords lock a user for
// LockoutDuration, a client network that fails SigninFailuresPerIP
// sign-ins waits SigninFailureRefill per further attempt (429), and every
// failed sign-in gets the same answer. Every
// query is scoped by the session's project: another project's
// notification, checkout, deposit, subscription or API key is a 404, as an
// unknown one. Resends, test webhooks, wallets and keys go through the same
// services as the API and the CLI. Pages: activity (deliveries per hour by
// outcome and attempt latency over 48 hours, server-rendered SVG),
// notifications (one with its payload, the headers each attempt sent as
// recorded, and its attempts), checkouts, deposits and subscriptions with
// their payments and invoice_status, and settings. /dashboard/events is a
// server-sent-event stream of the project's delivery events (the same
// database-backed stream as WatchDeliveries; Last-Event-ID resumes it);
// it ends when the session does and when the server stops.
//
// The hosted pages: the checkout page
// /payment/{payment_id}/, the deposit page /deposit/{payment_id}/ and the
// subscription page /subscription/{token}/, each with a small JSON status
// endpoint (status.json) that the page's script polls.
//
// Guarantees:
//   - The id in the path is the capability: it is 160 random bits, and the
//     pages show only what the customer needs to pay (no API key, no
//     project data beyond the item and its price). An unknown id is a 404.
//   - The pages work without JavaScript: choosing a coin is an HTML form,
//     the address and the exact amount are in the HTML, and a <noscript>
//     refresh keeps the status current. Scripts (embedded, same origin,
//     never inline) only add the live status, the countdown, the copy
//     buttons and the redirect on paid.
//   - Every merchant or customer value is rendered by html/template, which
//     escapes it for its context; a redirect_url is followed only when it is
//     an absolute http or https URL.
//   - Every response carries a Content-Security-Policy that allows scripts,
//     styles and fetches from the same origin only, and nosniff.
//   - Assets are embedded in the binary (embed.FS): no CDN, no build step.
//
// Addresses are handed out by the same service function as the merchant
// API's /checkout/address/ (invoice.Service.Address), so a coin chosen on
// the page and one asked for through the API give the same address and the
// same held quote.
package web
