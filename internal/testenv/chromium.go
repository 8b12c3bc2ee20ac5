package testenv

import (
	"bytes"
	"context"
	"os/exec"
	"regexp"
	"testing"
	"time"
)

// chromiumFlags start Debian's Chromium headless as root on a machine
// with no network: no sandbox (root), no GPU, and none of the background
// connections a closed network refuses.
var chromiumFlags = []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
	"--disable-background-networking", "--disable-component-update", "--disable-sync"}

// Browse loads the HTML file page (a path, with a #fragment or not) in
// headless Chromium (Debian's chromium), lets its scripts run for five seconds of virtual time, and
// returns the DOM it ends with and Chromium's log, where the console's
// messages go. The test skips where Chromium is absent.
func Browse(t testing.TB, page string) (dom, log string) {
	t.Helper()
	chromium := Tool(t, "chromium", "chromium")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	args := append(append([]string{}, chromiumFlags...), "--user-data-dir="+t.TempDir(), "--enable-logging=stderr", "--v=0",
		"--virtual-time-budget=5000", "--window-size=1400,1000", "--dump-dom", "file://"+page)
	cmd := exec.CommandContext(ctx, chromium, args...)
	var out, errs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errs
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, errs.String())
	}
	return out.String(), errs.String()
}

var (
	pageErrors    = regexp.MustCompile(`data-script-errors="([^"]*)"`)
	consoleErrors = regexp.MustCompile(`(?m)^.*CONSOLE.*"(Uncaught .*|.*Error.*)".*$`)
)

// ScriptErrors returns the script errors of a page Browse loaded: those
// the page's own error handler wrote on its root element (the
// data-script-errors attribute) and those the console logged.
func ScriptErrors(dom, log string) []string {
	var out []string
	if m := pageErrors.FindStringSubmatch(dom); m != nil {
		out = append(out, m[1])
	}
	for _, m := range consoleErrors.FindAllStringSubmatch(log, -1) {
		out = append(out, m[1])
	}
	return out
}
