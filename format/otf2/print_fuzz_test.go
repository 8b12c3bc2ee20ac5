package otf2

import (
	"bytes"
	"strings"
	"testing"
)

// FuzzReadPrintOutput reads arbitrary text as otf2-print's output. It must
// never panic, and return only lines of the events section.
func FuzzReadPrintOutput(f *testing.F) {
	for _, s := range []string{
		"=== OTF2-PRINT ===\n\n=== Events =====\nEvent                               Location            Timestamp  Attributes\n--------------------------------------------------------------------------------\nENTER                                              0                  1  Region: \"main\" <0>\n",
		"", "=== Events", "ENTER 0 1\n", "=== Events\n\n\n-----\nEvent x\nLEAVE 0 2",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		lines, err := ReadPrintOutput(bytes.NewReader(data))
		if err != nil {
			return
		}
		if len(lines) > 0 && !bytes.Contains(data, []byte("=== Events")) {
			t.Fatalf("%d lines outside an events section", len(lines))
		}
		for _, l := range lines {
			if l == "" || strings.ContainsAny(l, "\n") {
				t.Fatalf("line %q", l)
			}
		}
	})
}
