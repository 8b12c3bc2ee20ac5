package prefault

// The package reads a few small system files and GODEBUG with these
// rather than package strings: it imports only what the runtime's own
// initialization needs, so that its initialization, and the heap's
// advice that package atstart asks for there, come before most other
// packages' (cmd/kairos's TestHugeHeapFirst).

// cut returns s around the first sep, as strings.Cut.
func cut(s, sep string) (before, after string, found bool) {
	for i := 0; i+len(sep) <= len(s); i++ {
		if s[i:i+len(sep)] == sep {
			return s[:i], s[i+len(sep):], true
		}
	}
	return s, "", false
}

// isSpace reports whether c is ASCII white space.
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

// trimSpace returns s without leading and trailing ASCII white space.
func trimSpace(s string) string {
	for s != "" && isSpace(s[0]) {
		s = s[1:]
	}
	for s != "" && isSpace(s[len(s)-1]) {
		s = s[:len(s)-1]
	}
	return s
}

// nextField returns the first field of s separated by ASCII white space
// ("" if none) and what follows it.
func nextField(s string) (field, rest string) {
	s = trimSpace(s)
	i := 0
	for i < len(s) && !isSpace(s[i]) {
		i++
	}
	return s[:i], s[i:]
}
