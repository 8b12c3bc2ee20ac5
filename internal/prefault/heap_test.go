package prefault

import (
	"strings"
	"testing"
)

func TestDisabledByGODEBUG(t *testing.T) {
	for _, c := range []struct {
		godebug string
		off     bool
	}{
		{"", false},
		{"disablethp=1", true},
		{"disablethp=0", false},
		{"madvdontneed=1, disablethp=1", true},
		{"disablethp=1,disablethp=0", false},
		{"disablethp=0,disablethp=1", true},
		{"xdisablethp=1", false},
	} {
		if got := disabledByGODEBUG(c.godebug); got != c.off {
			t.Errorf("GODEBUG=%q: disabled %v, expected %v", c.godebug, got, c.off)
		}
	}
}

// FuzzDisabledByGODEBUG compares disabledByGODEBUG, which the package
// writes without package strings (text.go), with the same rule written
// with it.
func FuzzDisabledByGODEBUG(f *testing.F) {
	for _, s := range []string{"", "disablethp=1", " disablethp=1 ,x=2", "disablethp", "disablethp=1,disablethp", "a=b=c,disablethp=1=", "\tdisablethp=0\v", "\tdisablethp=1\r"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		want := false
		for _, kv := range strings.Split(v, ",") {
			if val, ok := strings.CutPrefix(strings.TrimFunc(kv, asciiSpace), "disablethp="); ok {
				want = val == "1"
			}
		}
		if got := disabledByGODEBUG(v); got != want {
			t.Errorf("GODEBUG=%q: disabled %v, expected %v", v, got, want)
		}
	})
}

// asciiSpace is ASCII white space, which trimSpace and nextField take
// for white space.
func asciiSpace(r rune) bool { return strings.ContainsRune(" \t\n\r\v\f", r) }
