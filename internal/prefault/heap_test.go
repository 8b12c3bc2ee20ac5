package prefault

import "testing"

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
