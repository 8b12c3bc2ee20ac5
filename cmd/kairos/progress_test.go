package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/schollz/progressbar/v3"
)

// TestAfterBars: output written through afterBars first clears the bars
// shown, so that it does not land on a bar's line.
func TestAfterBars(t *testing.T) {
	var term, out bytes.Buffer
	b := &bar{progressbar.NewOptions64(-1, progressbar.OptionSetWriter(&term), progressbar.OptionClearOnFinish())}
	b.Add(5)
	barsMu.Lock()
	bars = append(bars, b)
	barsMu.Unlock()
	if _, err := (afterBars{&out}).Write([]byte("result\n")); err != nil {
		t.Fatal(err)
	}
	if !b.pb.IsFinished() || len(bars) != 0 {
		t.Errorf("the bar is not finished before the output (finished %v, %d bars left)", b.pb.IsFinished(), len(bars))
	}
	if s := term.String(); !strings.HasSuffix(s, "\r") || out.String() != "result\n" {
		t.Errorf("terminal %q, output %q", s, out.String())
	}
}
