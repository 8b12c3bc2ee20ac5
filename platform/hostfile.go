package platform

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
)

// Mapping says how ranks are placed on the hostfile's entries.
type Mapping int

const (
	// RoundRobin puts rank i on entry i mod n, as smpirun does (the
	// default). With "host:K" lines this fills each host's K slots in turn.
	RoundRobin Mapping = iota
	// Block gives each entry a contiguous block of ranks, the blocks as
	// even as possible: with q = np/n and r = np%n, the first r entries
	// get q+1 ranks and the others q (so 6 ranks on 4 hosts: 0 0 1 1 2 3).
	Block
)

// String returns the mapping's command-line name.
func (m Mapping) String() string {
	switch m {
	case RoundRobin:
		return "roundrobin"
	case Block:
		return "block"
	}
	return fmt.Sprintf("Mapping(%d)", int(m))
}

// ParseMapping reads "roundrobin" (or "rr", "cyclic") and "block".
func ParseMapping(s string) (Mapping, error) {
	switch strings.ToLower(s) {
	case "roundrobin", "round-robin", "rr", "cyclic", "":
		return RoundRobin, nil
	case "block":
		return Block, nil
	}
	return 0, fmt.Errorf("platform: unknown mapping %q (expected roundrobin or block)", s)
}

// HostfileError locates a problem in a hostfile.
type HostfileError struct {
	File string
	Line int
	Msg  string
}

// Error formats the problem as "file:line: what".
func (e *HostfileError) Error() string {
	if e.Line == 0 {
		return e.File + ": " + e.Msg
	}
	return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
}

// hostfileLine is one expanded hostfile entry with its origin.
type hostfileLine struct {
	name string
	line int
}

// ReadHostfile reads an smpirun hostfile: one host name per line, blank
// lines ignored, "host:K" standing for K lines of "host" (smpirun's
// unrolling; the count follows the last ':'). Names are trimmed of white
// space.
func ReadHostfile(path string) ([]string, error) {
	lines, err := readHostfile(path)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(lines))
	for i, l := range lines {
		names[i] = l.name
	}
	return names, nil
}

// ReadHostfileFor reads a hostfile and checks that every host exists in p,
// reporting the first unknown one with its file and line.
func ReadHostfileFor(p *Platform, path string) ([]string, error) {
	lines, err := readHostfile(path)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(lines))
	for i, l := range lines {
		if _, ok := p.Host(l.name); !ok {
			return nil, &HostfileError{path, l.line, fmt.Sprintf("host %q is not in platform %s%s", clip(l.name), p.Name, suggestHosts(p))}
		}
		names[i] = l.name
	}
	return names, nil
}

func readHostfile(path string) ([]hostfileLine, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("platform: hostfile: %w", err)
	}
	defer f.Close()
	return parseHostfile(f, path)
}

const maxSlots = 1 << 20

// maxQuoted is the most bytes of a line an error quotes.
const maxQuoted = 80

// clip returns text, cut to maxQuoted bytes with "..." where longer (a
// binary file's line, up to a megabyte, would drown the error).
func clip(text string) string {
	if len(text) <= maxQuoted {
		return text
	}
	return text[:maxQuoted] + "..."
}

func parseHostfile(r io.Reader, path string) ([]hostfileLine, error) {
	var out []hostfileLine
	zero := 0 // the first line giving a host 0 slots
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for n := 1; sc.Scan(); n++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" {
			continue
		}
		name, count := text, 1
		if i := strings.LastIndexByte(text, ':'); i >= 0 {
			k, err := strconv.Atoi(strings.TrimSpace(text[i+1:]))
			if err != nil || k < 0 || k > maxSlots {
				return nil, &HostfileError{path, n, fmt.Sprintf("%q: expected host or host:K with K a number of slots from 0 to %d", clip(text), maxSlots)}
			}
			name, count = strings.TrimSpace(text[:i]), k
			if name == "" {
				return nil, &HostfileError{path, n, fmt.Sprintf("%q: missing host name", clip(text))}
			}
		}
		if count == 0 && zero == 0 {
			zero = n
		}
		if len(out)+count > maxSlots {
			return nil, &HostfileError{path, n, fmt.Sprintf("more than %d slots", maxSlots)}
		}
		for i := 0; i < count; i++ {
			out = append(out, hostfileLine{name, n})
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("platform: hostfile %s: %w", path, err)
	}
	switch {
	case len(out) == 0 && zero > 0:
		return nil, &HostfileError{path, zero, "the hostfile gives no slot to any host (host:0 places no rank there)"}
	case len(out) == 0:
		return nil, &HostfileError{path, 0, "the hostfile is empty"}
	}
	return out, nil
}

func suggestHosts(p *Platform) string {
	if len(p.Hosts) == 0 {
		return ""
	}
	if len(p.Hosts) <= 5 {
		names := make([]string, len(p.Hosts))
		for i, h := range p.Hosts {
			names[i] = h.Name
		}
		return " (its hosts: " + strings.Join(names, ", ") + ")"
	}
	return fmt.Sprintf(" (its hosts: %s, %s, ... %s)", p.Hosts[0].Name, p.Hosts[1].Name, p.Hosts[len(p.Hosts)-1].Name)
}

// Deploy places np ranks on hosts and returns the host of each rank (see
// Place).
func Deploy(p *Platform, hostnames []string, np int, m Mapping) ([]*Host, error) {
	pl, err := Place(p, hostnames, np, m)
	if err != nil {
		return nil, err
	}
	out := make([]*Host, np)
	for i := range out {
		out[i] = pl.Host(i)
	}
	return out, nil
}

// A Placement says which host each of its ranks runs on. It is computed
// rank by rank from the slots, so that describing a placement of many
// ranks on few hosts costs what the hosts cost, not the ranks.
type Placement struct {
	slots []*Host
	np    int
	m     Mapping
}

// Place places np ranks on hosts. hostnames is the expanded hostfile;
// when it is empty, all the platform's hosts are used in SimGrid's order,
// which is by name (smpirun then calls Engine::get_all_hosts, which sorts
// them), not definition order.
func Place(p *Platform, hostnames []string, np int, m Mapping) (Placement, error) {
	if np <= 0 {
		return Placement{}, fmt.Errorf("platform: number of ranks must be positive, got %d", np)
	}
	if m != RoundRobin && m != Block {
		return Placement{}, fmt.Errorf("platform: unknown mapping %v", m)
	}
	hosts := make([]*Host, 0, len(hostnames))
	for i, name := range hostnames {
		h, ok := p.Host(name)
		if !ok {
			return Placement{}, fmt.Errorf("platform: hostfile entry %d: host %q is not in platform %s%s", i+1, name, p.Name, suggestHosts(p))
		}
		hosts = append(hosts, h)
	}
	if len(hosts) == 0 {
		hosts = append(hosts, p.Hosts...)
		sort.Slice(hosts, func(i, j int) bool { return hosts[i].Name < hosts[j].Name })
	}
	if len(hosts) == 0 {
		return Placement{}, fmt.Errorf("platform %s has no host to place ranks on", p.Name)
	}
	return Placement{slots: hosts, np: np, m: m}, nil
}

// NumRanks returns the number of ranks placed.
func (pl Placement) NumRanks() int { return pl.np }

// Host returns the host of rank, from 0 to NumRanks()-1: round-robin
// over the slots, or in blocks of consecutive ranks, the first np mod
// slots blocks one rank longer.
func (pl Placement) Host(rank int) *Host {
	n := len(pl.slots)
	if pl.m == RoundRobin {
		return pl.slots[rank%n]
	}
	q, r := pl.np/n, pl.np%n
	boundary := r * (q + 1)
	if rank < boundary {
		return pl.slots[rank/(q+1)]
	}
	return pl.slots[r+(rank-boundary)/q]
}
