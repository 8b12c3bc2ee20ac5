package platform

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Profile is a resource's values over time, read from SimGrid's
// deterministic profile syntax: lines "DATE VALUE" with dates in seconds,
// non-decreasing from 0, comments starting with # or %, and
// "PERIODICITY P" (the values repeat every P seconds) or "LOOPAFTER D"
// (they repeat D seconds after the last one). For a host's speed, a value
// scales the speed of its pstate.
type Profile struct {
	// Events holds each value and its delay after the previous one (after
	// 0 for the first).
	Events []ProfileEvent
	// Repeat is the delay from the last event to the first one again, or
	// -1 if the profile does not repeat.
	Repeat float64
}

// ProfileError is a problem at a line of a profile's text (1 for its
// first), or of the whole profile (Line 0).
type ProfileError struct {
	Line int
	Err  error
}

func (e *ProfileError) Error() string {
	if e.Line == 0 {
		return e.Err.Error()
	}
	return fmt.Sprintf("line %d: %v", e.Line, e.Err)
}

// ProfileEvent is one value of a profile and its delay after the previous.
type ProfileEvent struct {
	Delay, Value float64
}

// ParseProfile reads a profile as SimGrid's LegacyUpdateCb does;
// periodicity > 0 (a <trace>'s attribute) repeats it as PERIODICITY does.
// Errors name the line of the text. Stochastic profiles are refused: their draws are
// SimGrid's random generator's.
func ParseProfile(text string, periodicity float64) (*Profile, error) {
	p := &Profile{Repeat: -1}
	loop, loopDelay, last := periodicity > 0, 0.0, 0.0
	for i, raw := range strings.Split(text, "\n") {
		line := strings.TrimSpace(raw)
		if line == "" || line[0] == '#' || line[0] == '%' {
			continue
		}
		f := strings.Fields(line)
		if (f[0] == "PERIODICITY" || f[0] == "LOOPAFTER") && len(f) == 2 {
			v, err := strconv.ParseFloat(f[1], 64)
			if err != nil {
				return nil, lineErr(i+1, "%s %q is not a number", f[0], f[1])
			}
			if f[0] == "PERIODICITY" {
				periodicity = v
			} else {
				loopDelay = v
			}
			loop = true
			continue
		}
		switch {
		case strings.HasPrefix(f[0], "STOCHASTIC") || len(f) != 2:
			return nil, lineErr(i+1, "%q: expected \"DATE VALUE\" (stochastic profiles are not supported)", line)
		}
		date, err1 := strconv.ParseFloat(f[0], 64)
		value, err2 := strconv.ParseFloat(f[1], 64)
		switch {
		case err1 != nil || err2 != nil || math.IsNaN(date) || math.IsInf(date, 0) || math.IsNaN(value):
			return nil, lineErr(i+1, "%q: expected \"DATE VALUE\", two numbers", line)
		case date < 0:
			return nil, lineErr(i+1, "negative date %g", date)
		case date < last:
			return nil, lineErr(i+1, "date %g before the previous one (%g): events must be sorted", date, last)
		}
		p.Events = append(p.Events, ProfileEvent{Delay: date - last, Value: value})
		last = date
	}
	if periodicity > 0 {
		if loopDelay != 0 {
			return nil, &ProfileError{Err: fmt.Errorf("give PERIODICITY or LOOPAFTER, not both")}
		}
		loopDelay = periodicity - last
	}
	if loopDelay < 0 {
		return nil, &ProfileError{Err: fmt.Errorf("the profile repeats before its last event (period %g, last event at %g)", periodicity, last)}
	}
	if loop && len(p.Events) > 0 {
		if last+loopDelay == 0 {
			return nil, &ProfileError{Err: fmt.Errorf("the profile would repeat forever at date 0 (give it a period)")}
		}
		p.Repeat = loopDelay
	}
	return p, nil
}

// scaled returns p with its values multiplied by f, the copy made once
// per profile (done), or p itself if nil or f is 1.
func (p *Profile) scaled(f float64, done map[*Profile]*Profile) *Profile {
	if p == nil || f == 1 {
		return p
	}
	if q, ok := done[p]; ok {
		return q
	}
	q := &Profile{Repeat: p.Repeat, Events: make([]ProfileEvent, len(p.Events))}
	for i, e := range p.Events {
		q.Events[i] = ProfileEvent{Delay: e.Delay, Value: e.Value * f}
	}
	done[p] = q
	return q
}

func lineErr(line int, format string, a ...any) error {
	return &ProfileError{Line: line, Err: fmt.Errorf(format, a...)}
}

// traceConnect is a <trace_connect kind="SPEED">, applied once every host
// exists.
type traceConnect struct {
	trace, element string
	line           int
}

// readProfileFile reads a profile file as SimGrid finds it: as given, or
// beside the platform file.
func (ps *parser) readProfileFile(f *frame, attr string) (*Profile, error) {
	name := f.attrs[attr]
	if err := ps.defineProfile(f, attr, name); err != nil {
		return nil, err
	}
	data, err := os.ReadFile(name)
	if err != nil && !filepath.IsAbs(name) {
		alt := filepath.Join(filepath.Dir(ps.file), name)
		if data, err = os.ReadFile(alt); err == nil {
			name = alt
		}
	}
	if err != nil {
		return nil, ps.errAt(f, attr, "%v", err)
	}
	p, err := ParseProfile(string(data), -1)
	if pe, ok := err.(*ProfileError); ok {
		// The profile file's line, and where the platform names it.
		return nil, &Error{File: name, Line: pe.Line, Err: fmt.Errorf("%v (the %s of the <%s> at %s:%d)", pe.Err, attr, f.name, ps.file, f.line)}
	}
	return p, err
}

// defineProfile records a profile's name, or says it is defined already,
// as SimGrid 3.32 does (a profile file is read once: two hosts or links
// cannot name the same one).
func (ps *parser) defineProfile(f *frame, attr, name string) error {
	if ps.profileNames[name] {
		return ps.errAt(f, attr, "refusing to define trace %q twice (SimGrid 3.32 aborts: a profile, file or <trace>, can be given once)", name)
	}
	ps.profileNames[name] = true
	return nil
}

// trace reads a <trace>: from its file (whose own PERIODICITY lines count,
// not the attribute, as in SimGrid) or from its text.
func (ps *parser) trace(f *frame) error {
	id := f.attrs["id"]
	if _, dup := ps.traces[id]; dup {
		return ps.errAt(f, "id", "refusing to define trace %q twice", id)
	}
	var p *Profile
	var err error
	if f.attrs["file"] != "" {
		p, err = ps.readProfileFile(f, "file")
	} else if err = ps.defineProfile(f, "id", id); err == nil {
		period, perr := strconv.ParseFloat(strings.TrimSpace(f.attrs["periodicity"]), 64)
		if perr != nil {
			return ps.errAt(f, "periodicity", "%q is not a number", f.attrs["periodicity"])
		}
		if p, err = ParseProfile(f.text.String(), period); err != nil {
			// The text starts on the line of the <trace> tag.
			pe := err.(*ProfileError)
			line := f.line
			if pe.Line > 0 {
				line += pe.Line - 1
			}
			err = &Error{File: ps.file, Line: line, Elem: f.name, Err: pe.Err}
		}
	}
	if err != nil {
		return err
	}
	ps.traces[id] = p
	return nil
}

// traceConnect reads a <trace_connect>; only host speed profiles can be
// connected: SimGrid 3.32 aborts on a link's (the link is sealed by then),
// whose profiles come from its bandwidth_file and latency_file, and
// availability profiles are not modelled (a host or link that fails
// aborts an MPI replay).
func (ps *parser) traceConnect(f *frame) error {
	switch kind := f.attrs["kind"]; kind {
	case "SPEED":
	case "BANDWIDTH", "LATENCY":
		return ps.errAt(f, "kind", "SimGrid 3.32 cannot connect a <trace> to a link (it aborts: \"Cannot set a %s profile once the Link is sealed\"); give the <link> a %s_file", strings.ToLower(kind), strings.ToLower(kind))
	default:
		return ps.errAt(f, "kind", "%s profiles are not supported (a host or link that fails aborts an MPI replay)", kind)
	}
	for _, c := range ps.connects {
		if c.trace == f.attrs["trace"] {
			return nil // SimGrid keeps a trace's first connection
		}
	}
	ps.connects = append(ps.connects, traceConnect{trace: f.attrs["trace"], element: f.attrs["element"], line: f.line})
	return nil
}

// connectTraces gives the connected hosts their speed profiles.
func (ps *parser) connectTraces() error {
	for _, c := range ps.connects {
		f := &frame{name: "trace_connect", line: c.line}
		p, ok := ps.traces[c.trace]
		if !ok {
			return ps.errAt(f, "trace", "no trace %q", c.trace)
		}
		h, ok := ps.b.p.hostByName[c.element]
		if !ok {
			return ps.errAt(f, "element", "no host %q", c.element)
		}
		h.SpeedProfile = p
	}
	return nil
}
