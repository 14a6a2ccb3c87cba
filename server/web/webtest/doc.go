// Package webtest holds what the tests of the hosted pages
// (server/web/pay) and of the dashboard (server/web/dashboard) share:
// fetching a page and checking what it says, a settable clock, calls to a
// test server's merchant API and devnet, and a headless Chromium at a
// phone's width (the browser tests skip where it is not installed, and
// fail in CI). Tests only: no package outside tests imports it.
package webtest
