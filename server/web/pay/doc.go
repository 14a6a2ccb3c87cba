// Package pay serves the hosted pages a customer opens: the checkout page
// /payment/{payment_id}/, the deposit page /deposit/{payment_id}/ and the
// subscription page /subscription/{token}/, each with a small JSON status
// endpoint (status.json) that the page's script polls. Handler.Wrap puts
// them in front of the REST gateway, whose /deposit/request/ and
// /subscription/create/ share their first segment: a path that is not a
// page's (its id has the page's prefix) goes to the gateway.
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
//   - Every response carries the headers of web.Secure (a
//     Content-Security-Policy that allows scripts, styles and fetches from
//     the same origin only, and nosniff).
//   - The pages' script is embedded in the binary (Assets, served by
//     web.Assets): no CDN, no build step.
//
// Addresses are handed out by the same service function as the merchant
// API's /checkout/address/ (invoice.Service.Address), so a coin chosen on
// the page and one asked for through the API give the same address and the
// same held quote. A choice the service refuses (a coin without a price,
// below the minimum, expired) is shown on the page as a 400 with the
// coins again; any other failure is the generic error page, logged.
package pay
