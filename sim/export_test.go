package sim

import "kairos/trace"

// TryIncremental makes the automatic solver start with the incremental
// solver on every trace, as it does on those that may repeat (mayRepeat),
// so that the tests of its certificates and fallback run on traces that
// do not; the returned function restores the choice.
func TryIncremental() (restore func()) {
	repeats = func(trace.Source) bool { return true }
	return func() { repeats = mayRepeat }
}
