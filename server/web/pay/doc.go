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
//     pages show only what the customer needs to pay and whom: the item and
//     its price, and the merchant's identity as the project set it (name,
//     logo, colour, support contact); never an API key or other project
//     data. An unknown id is a 404.
//   - The merchant's logo and colour are served below the page's own path
//     ({page}/logo, {page}/brand.css), so they need the page's id and no
//     project id is ever in a URL. The logo is served with
//     web.ServeLogo's policy (no script, no load, sandboxed, nosniff) on top
//     of the checks it passed when uploaded (project.CheckLogo); the colour
//     comes as a stylesheet because the pages' policy allows no inline
//     style.
//   - Coins are offered in the project's order of preference (its accepted
//     tickers as listed), each with an icon of payhook's own (embedded SVG,
//     assets/coin-*.svg) and, for a fixed amount, what the value is in it
//     now (the quote choosing it holds). A subscription's coins show
//     what each plan option costs in them; the script shows only the
//     chosen plan's, and without it every plan's is listed with its
//     period.
//   - A payment waiting in its chain's mempool (Config.Mempool) shows as
//     "payment detected" at once, on the page and in status.json; it is no
//     payment yet, so the merchant hears of it from its block (no
//     webhook), as the spec says. Once paid, the payment instructions and
//     the countdown are gone (a deposit keeps them: it may be paid again).
//   - The pages speak the payer's language: ?lang= (a plain link of the
//     language switch, remembered in the LangCookie cookie), else the
//     cookie, else Accept-Language, else English, from the catalogues of
//     package i18n. status.json speaks the page's language. A refusal the
//     invoice service words (a coin without a price, below the minimum) is
//     shown as the service words it, in English.
//   - The pages work without JavaScript: choosing a coin is an HTML form,
//     the address and the exact amount are in the HTML, and a <noscript>
//     refresh keeps the status current. Scripts (embedded, same origin,
//     never inline) only add the live status, the countdown, the copy
//     buttons, hiding the instructions once paid, and the redirect on paid;
//     their words come from the page (data-t-* attributes), in its
//     language.
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
