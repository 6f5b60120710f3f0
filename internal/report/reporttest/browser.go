// Package reporttest opens a report in a real headless Chromium for tests: it loads the
// file, records every network request the page makes, every console error, exception and
// Content-Security-Policy violation, counts the chart elements that drew, and takes a
// full-page screenshot. Tests of the report and of `agbench run` use it.
//
// It drives Chromium through the DevTools protocol (github.com/chromedp/chromedp) and
// imports nothing from agbench.
//
// Imports from agbench: none.
package reporttest

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// Chromium returns the path of an installed Chromium or Chrome, or "".
func Chromium() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// Require returns Chromium's path, or skips the test when there is none (fails instead when
// AGBENCH_REQUIRE_BROWSER=1, as `make test` sets after installing Debian's chromium), and
// under -short.
func Require(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		t.Skip("browser test: skipped under -short")
	}
	p := Chromium()
	if p == "" {
		if os.Getenv("AGBENCH_REQUIRE_BROWSER") == "1" {
			t.Fatal("no chromium installed (scripts/install-deps.sh installs it with AGBENCH_EXTRA_PACKAGES=chromium)")
		}
		t.Skip("no chromium installed")
	}
	return p
}

// Page is what the browser saw of a report.
type Page struct {
	// Requests are the URLs the page asked for other than the file itself.
	Requests []string
	// Problems are console errors and warnings, exceptions and CSP violations.
	Problems []string
	// Counts is the number of elements matching each selector asked for.
	Counts map[string]int
	// Drawn is the number of svg.chart elements with a visible size and at least one drawn
	// line (a path of non-zero length), bar (a rect of non-zero height) or point.
	Drawn int
	// Screenshot is a full-page PNG.
	Screenshot []byte
}

// Render opens the HTML file in headless Chromium with the flags of a locked-down test
// browser and a fresh profile, and reports what it saw.
func Render(ctx context.Context, chromium, htmlFile string, selectors []string) (*Page, error) {
	abs, err := filepath.Abs(htmlFile)
	if err != nil {
		return nil, err
	}
	profile, err := os.MkdirTemp("", "agbench-chromium-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(profile)
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromium), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.UserDataDir(profile), chromedp.WindowSize(1280, 900),
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true), chromedp.Flag("disable-extensions", true),
	}
	actx, cancelA := chromedp.NewExecAllocator(ctx, opts...)
	defer cancelA()
	bctx, cancelB := chromedp.NewContext(actx)
	defer cancelB()

	page := &Page{Counts: map[string]int{}}
	var mu sync.Mutex
	self := (&url.URL{Scheme: "file", Path: abs}).String()
	if err := chromedp.Listen(bctx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch ev := ev.(type) {
		case *network.EventRequestWillBeSent:
			if u := ev.Request.URL; u != self && !strings.HasPrefix(u, "data:") && u != "about:blank" {
				page.Requests = append(page.Requests, u)
			}
		case *runtime.EventExceptionThrown:
			page.Problems = append(page.Problems, "exception: "+ev.ExceptionDetails.Text)
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.ConsoleAPICalledTypeError || ev.Type == runtime.ConsoleAPICalledTypeWarning || ev.Type == runtime.ConsoleAPICalledTypeAssert {
				page.Problems = append(page.Problems, fmt.Sprintf("console.%s", ev.Type))
			}
		case *log.EventEntryAdded:
			if ev.Entry.Level == log.EntryLevelError || ev.Entry.Level == log.EntryLevelWarning {
				page.Problems = append(page.Problems, fmt.Sprintf("%s %s: %s", ev.Entry.Source, ev.Entry.Level, ev.Entry.Text))
			}
		}
	}); err != nil {
		return nil, fmt.Errorf("start chromium: %w", err)
	}
	if err := chromedp.Do(bctx, chromedp.EmulateViewport(1280, 900), chromedp.Navigate(self)); err != nil {
		return nil, fmt.Errorf("open %s: %w", self, err)
	}
	for _, sel := range selectors {
		n, err := chromedp.Run(bctx, chromedp.Evaluate[int](fmt.Sprintf("document.querySelectorAll(%q).length", sel)))
		if err != nil {
			return nil, fmt.Errorf("count %s: %w", sel, err)
		}
		page.Counts[sel] = n
	}
	drawn, err := chromedp.Run(bctx, chromedp.Evaluate[int](`Array.from(document.querySelectorAll('svg.chart')).filter(function (s) {
		var r = s.getBoundingClientRect();
		if (r.width < 100 || r.height < 50) return false;
		var lines = Array.from(s.querySelectorAll('path.line')).filter(function (p) { return p.getTotalLength() > 0; });
		var bars = Array.from(s.querySelectorAll('rect.bar')).filter(function (b) { return b.getBBox().height > 0; });
		var dots = Array.from(s.querySelectorAll('circle.pt')).filter(function (c) { return c.getBBox().width > 0; });
		return lines.length + bars.length + dots.length > 0;
	}).length`))
	if err != nil {
		return nil, fmt.Errorf("check charts: %w", err)
	}
	page.Drawn = drawn
	shot, err := chromedp.Run(bctx, chromedp.FullScreenshot(100))
	if err != nil {
		return nil, fmt.Errorf("screenshot: %w", err)
	}
	page.Screenshot = shot
	// Give late requests or violations a moment to arrive before reading them.
	time.Sleep(200 * time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	return page, nil
}
