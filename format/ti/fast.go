package ti

import "kairos/trace"

// The fast path of the parser. Nearly every line of a trace, whoever
// wrote it, is in one canonical shape: the rank, the action name and its
// arguments separated by single spaces, small non-negative integers and
// plain decimal reals, nothing before the rank and nothing after the last
// argument. fastAction parses such a line of the common actions straight
// from its bytes, without cutting it into tokens first, and gives up on
// anything else: the general path (split, then action) then reads the
// line, and reports its errors with their columns. Whatever the fast path
// accepts, the general path reads into the same event: it uses the same
// number parsers (fastReal is exact, see number.go) and the same
// setters, and refuses every byte the general path would treat
// differently (a tab, a carriage return, two spaces, a sign, a larger
// number than smallUint reads).
//
// BenchmarkParse: about twice as many lines per CPU second as the
// general path alone (BENCHMARKS.md).

// fastAction parses the line at the start of b (buffered input, the
// line's newline included) into p.ev if it is a line of this rank
// (rankTok) in the canonical shape of a common action, and returns its
// length with its newline; 0 if it did not read it. It finds the end of
// the line as it reads the fields: there is no separate pass.
func (p *parser) fastAction(b, rankTok []byte) int {
	n := len(rankTok)
	if len(b) <= n+9 || b[n] != ' ' { // 9: the longest name and its end
		return 0
	}
	for k, c := range rankTok { // shorter than a call to compare
		if b[k] != c {
			return 0
		}
	}
	// The name and the byte after it, compared at once.
	i := n + 1
	ev := &p.ev
	switch b[i] {
	case 'c':
		if string(b[i:i+8]) == "compute " {
			return p.fastCompute(b, i+7)
		}
	case 'i':
		switch string(b[i : i+6]) {
		case "isend ":
			return p.fastPointToPoint(trace.Isend, b, i+5)
		case "irecv ":
			return p.fastPointToPoint(trace.Irecv, b, i+5)
		}
		if string(b[i:i+5]) == "init\n" {
			// action reads no argument of init: Open does.
			ev.Reset()
			ev.Kind = trace.Init
			return i + 5
		}
	case 's':
		if string(b[i:i+5]) == "send " {
			return p.fastPointToPoint(trace.Send, b, i+4)
		}
	case 'r':
		if string(b[i:i+5]) == "recv " {
			return p.fastPointToPoint(trace.Recv, b, i+4)
		}
	case 'w':
		if string(b[i:i+5]) == "wait " {
			return p.fastWaitTest(trace.Wait, b, i+4)
		}
		if string(b[i:i+8]) == "waitall\n" {
			ev.Reset()
			ev.Kind = trace.Waitall
			p.store.clear()
			return i + 8
		}
	case 't':
		if string(b[i:i+5]) == "test " {
			return p.fastWaitTest(trace.Test, b, i+4)
		}
	case 'f':
		if string(b[i:i+9]) == "finalize\n" {
			ev.Reset()
			ev.Kind = trace.Finalize
			return i + 9
		}
	}
	return 0
}

// fastUint reads the field at b[i:], after the space at b[i-1]: 1 to 9
// decimal digits ended by a space or the newline. It returns the value,
// the index after the ending byte, which it returns too; ok false if the
// field is anything else.
func fastUint(b []byte, i int) (v int64, next int, end byte, ok bool) {
	j := i
	for ; j < len(b) && j-i < 10; j++ {
		c := b[j]
		if c-'0' <= 9 {
			v = v*10 + int64(c-'0')
			continue
		}
		if (c == ' ' || c == '\n') && j > i && j-i <= 9 {
			return v, j + 1, c, true
		}
		return 0, 0, 0, false
	}
	return 0, 0, 0, false
}

// fastUints3 reads " <x> <y> <z>" at b[j:], three small non-negative
// integers after single spaces, and returns the index after z's end and
// that end (a space or a newline).
func fastUints3(b []byte, j int) (x, y, z int64, next int, end byte, ok bool) {
	if b[j] != ' ' {
		return
	}
	x, i, e, ok := fastUint(b, j+1)
	if !ok || e != ' ' {
		return 0, 0, 0, 0, 0, false
	}
	y, i, e, ok = fastUint(b, i)
	if !ok || e != ' ' {
		return 0, 0, 0, 0, 0, false
	}
	z, i, e, ok = fastUint(b, i)
	return x, y, z, i, e, ok
}

// fastCompute: "compute <flops>", a real fastReal reads exactly. b[j] is
// the byte after the name.
func (p *parser) fastCompute(b []byte, j int) int {
	if b[j] != ' ' {
		return 0
	}
	i := j + 1
	k := i
	for k < len(b) && b[k] != '\n' && b[k] != ' ' {
		k++
	}
	if k == len(b) || b[k] != '\n' {
		return 0
	}
	v, ok := fastReal(b[i:k])
	if !ok || !(v >= 0 && v <= trace.MaxFlops) {
		return 0
	}
	ev := &p.ev
	ev.Reset()
	ev.Kind = trace.Compute
	ev.Compute = v
	return k + 1
}

// fastPointToPoint: "<partner> <tag> <count> [dt]", small non-negative
// integers and a datatype id, as pointToPoint's own fast path reads them.
func (p *parser) fastPointToPoint(k trace.Kind, b []byte, j int) int {
	partner, tag, count, i, e3, ok := fastUints3(b, j)
	if !ok {
		return 0
	}
	dt := trace.DefaultType
	if e3 == ' ' {
		e := i
		for e < len(b) && e-i < 3 && b[e] != '\n' {
			e++
		}
		d, ok := parseDatatype(b[i:e])
		if !ok || e == len(b) || b[e] != '\n' {
			return 0
		}
		dt, i = trace.Datatype(d), e+1
	}
	p.ev.Reset()
	p.ev.Kind = k
	p.setPointToPoint(k, int32(partner), int32(tag), count*dt.Size(p.deftyp), dt)
	return i
}

// fastWaitTest: "<src> <dst> <tag>", small non-negative integers.
func (p *parser) fastWaitTest(k trace.Kind, b []byte, j int) int {
	src, dst, tag, i, e3, ok := fastUints3(b, j)
	if !ok || e3 != '\n' {
		return 0
	}
	p.ev.Reset()
	p.ev.Kind = k
	p.setWaitTest(k, int32(src), int32(dst), int32(tag))
	return i
}
