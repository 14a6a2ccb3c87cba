// Package web is what the hosted pages (package pay, below) and the
// dashboard (package dashboard, below) share, and nothing else: the
// security headers, rendering, the frame and the not-found and error
// pages, the template functions, the coin and period labels, and the
// server of the embedded assets. server.New builds one handler of each
// part and mounts them: the dashboard at /dashboard/, the assets at
// AssetPrefix, the hosted pages in front of the REST gateway.
//
// Guarantees, for every part that uses it:
//   - Secure sets a Content-Security-Policy that allows scripts, styles and
//     fetches from the same origin only (no inline script or style), images
//     from the same origin and data: URIs, forms posting back, and no
//     framing; with nosniff, no referrer and X-Frame-Options DENY. Every
//     response of the pages, the dashboard and the assets carries them,
//     redirects and errors included.
//   - Pages are html/template, which escapes every value for its context.
//     A page is executed into a buffer first: a template failure is a clean
//     500 and a log line, never half a page. Pages are never cached
//     (no-store); a failure the visitor cannot fix shows the generic error
//     page and is logged with what was being done, and its error never
//     reaches the page.
//   - Assets are embedded in the binary (embed.FS): no CDN, no build step.
//     They are served from the same origin below AssetPrefix, only by exact
//     file name (no directory listing), cached for an hour. Each name has
//     one owner: NewAssets refuses a part that carries a file another part,
//     or this package, already has.
//
// ServeLogo serves a project's logo for both parts, with a policy of its own
// (no script, no load, sandboxed) and nosniff.
//
// The frame (templates/layout.html) is the hosted pages': it loads the
// shared style.css and the pages' script (page.js, package pay's), and the
// dashboard shows its not-found and error pages in it too, as it always
// has. The dashboard's own pages have their own frame.
package web
