package webtest

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/payhook/payhook/chains/nodetest"
)

var updateScreenshots = flag.Bool("update-screenshots", false, "write the hosted pages' and the dashboard's screenshots to docs/screenshots/")

// screenshotDir is docs/screenshots/ of the module, found from this file
// (a test runs in its package's directory, which differs by package).
func screenshotDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "docs", "screenshots")
}

// Browser starts headless Chromium at a phone's width; it is closed
// before the test ends. Without Chromium the test is skipped (failed in
// CI).
func Browser(t *testing.T) context.Context {
	t.Helper()
	exe := nodetest.Need(t, "chromium", "apt-get install -y chromium", "/usr/bin/chromium", "/usr/bin/chromium-browser")
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(exe),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(390, 844),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelBrowser := chromedp.NewContext(actx)
	ctx, cancelTimeout := context.WithTimeout(ctx, 90*time.Second)
	t.Cleanup(func() {
		cancelTimeout()
		cancelBrowser()
		cancelAlloc()
	})
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return ctx
}

// Shot saves a full-page PNG as docs/screenshots/name when
// -update-screenshots is set.
func Shot(name string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		if !*updateScreenshots {
			return nil
		}
		png, err := chromedp.FullScreenshot(100)(ctx, t)
		if err != nil {
			return err
		}
		dir := screenshotDir()
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dir, name), png, 0o644)
	})
}

// Into runs a and stores its value in dst.
func Into[T any](dst *T, a chromedp.Action[T]) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		v, err := a(ctx, t)
		*dst = v
		return err
	})
}

// Until polls a JavaScript condition until it is true, for at most d.
func Until(cond string, d time.Duration) chromedp.Action[chromedp.Void] {
	var ok bool
	return Into(&ok, chromedp.Poll[bool](cond, chromedp.WithPollingTimeout(d)))
}

// ClickFresh clicks the element selector finds, looked up in the page at
// the moment of the click (polled for at most 10s): on a page the live
// stream re-renders, a node found earlier can be gone by the time a
// click reaches it ("No node with given id found", seen under load in
// CI).
func ClickFresh(selector string) chromedp.Action[chromedp.Void] {
	q, _ := json.Marshal(selector)
	return Until(`(() => { const e = document.querySelector(`+string(q)+`); if (!e) return false; e.click(); return true; })()`, 10*time.Second)
}

// PhoneWidth is the narrowest common phone viewport, in CSS pixels.
const PhoneWidth = 360

// AtPhoneWidth emulates a 360px-wide mobile device (viewport meta tag
// honoured, touch, device scale 2).
func AtPhoneWidth() chromedp.Action[chromedp.Void] {
	return chromedp.EmulateViewport(PhoneWidth, 740, chromedp.EmulateScale(2), chromedp.EmulateMobile)
}

// PhoneBrowser is Browser emulating a 360px-wide phone (AtPhoneWidth).
func PhoneBrowser(t *testing.T) context.Context {
	t.Helper()
	ctx := Browser(t)
	if err := chromedp.Do(ctx, AtPhoneWidth()); err != nil {
		t.Fatal(err)
	}
	return ctx
}

// FitsWidth fails when the page at url scrolls sideways at phone width:
// only a table's own .scroll box may be wider than the screen. ready is
// the CSS selector of an element the page shows once loaded.
func FitsWidth(t *testing.T, ctx context.Context, url, ready string) {
	t.Helper()
	var width int64
	var wide []string
	if err := chromedp.Do(ctx,
		chromedp.Navigate(url),
		chromedp.WaitVisible(chromedp.CSS(ready)),
		Into(&width, chromedp.Evaluate[int64](`document.documentElement.scrollWidth`)),
		// The elements that stick out, for the failure message.
		Into(&wide, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("body *"))
			.filter(e => !e.closest(".scroll") && e.getBoundingClientRect().right > window.innerWidth + 0.5)
			.map(e => e.tagName.toLowerCase() + (e.id ? "#" + e.id : "") + (e.className ? "." + e.className : ""))`)),
	); err != nil {
		t.Fatalf("%s: %v", url, err)
	}
	if width > PhoneWidth {
		t.Errorf("%s is %dpx wide at a %dpx viewport; too wide: %s", url, width, PhoneWidth, strings.Join(wide, ", "))
	}
}
