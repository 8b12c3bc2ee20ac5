package platform

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
)

// Error is a problem in a platform description, located by file and line.
type Error struct {
	File string
	Line int
	Elem string // element name, without brackets ("" if none)
	Attr string // attribute name ("" if none)
	Err  error
}

// Error formats the problem as "file:line: <elem> attribute attr: what".
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	b.WriteString(": ")
	if e.Elem != "" {
		fmt.Fprintf(&b, "<%s> ", e.Elem)
	}
	if e.Attr != "" {
		fmt.Fprintf(&b, "attribute %s: ", e.Attr)
	}
	b.WriteString(e.Err.Error())
	return b.String()
}

// Unwrap returns the underlying problem.
func (e *Error) Unwrap() error { return e.Err }

// req marks a required attribute in an element's attribute table.
const req = "\x00required"

// elemSpec is an element of SimGrid's DTD (simgrid.dtd, v4.1) that kairos
// reads: its attributes with their defaults, and its allowed children.
type elemSpec struct {
	attrs    map[string]string
	enums    map[string][]string
	children []string
}

var zoneChildren = []string{"prop", "zone", "AS", "cluster", "link", "zoneRoute", "ASroute", "host", "router", "route",
	"include", "backbone", "cabinet", "peer", "trace", "trace_connect", "host_link", "bypassRoute", "bypassASroute",
	"bypassZoneRoute", "storage_type", "storage"}

var sharingEnum = []string{"SHARED", "SPLITDUPLEX", "FULLDUPLEX", "FATPIPE"}

var specs = map[string]*elemSpec{
	"platform": {attrs: map[string]string{"version": "0.0"},
		children: []string{"config", "zone", "AS", "cluster", "random", "include", "cabinet", "peer", "trace", "trace_connect", "process", "actor"}},
	"config": {attrs: map[string]string{"id": ""}, children: []string{"prop"}},
	"prop":   {attrs: map[string]string{"id": req, "value": req}},
	"zone":   {attrs: map[string]string{"id": req, "routing": req}, children: zoneChildren},
	"AS":     {attrs: map[string]string{"id": req, "routing": req}, children: zoneChildren},
	"host": {attrs: map[string]string{"id": req, "speed": req, "core": "1", "speed_file": "", "availability_file": "",
		"state_file": "", "coordinates": "", "pstate": "0.0"}, children: []string{"prop", "disk", "mount"}},
	"disk":   {attrs: map[string]string{"id": "/", "read_bw": req, "write_bw": req}, children: []string{"prop"}},
	"router": {attrs: map[string]string{"id": req, "coordinates": ""}},
	"peer": {attrs: map[string]string{"id": req, "speed": req, "bw_in": req, "bw_out": req, "lat": "", "coordinates": "",
		"speed_file": "", "availability_file": "", "state_file": ""}},
	"link": {attrs: map[string]string{"id": req, "bandwidth": req, "bandwidth_file": "", "latency": "0", "latency_file": "",
		"state_file": "", "sharing_policy": "SHARED"},
		enums:    map[string][]string{"sharing_policy": append(sharingEnum[:4:4], "WIFI")},
		children: []string{"prop"}},
	"cluster": {attrs: map[string]string{"id": req, "prefix": req, "suffix": req, "radical": req, "speed": req, "core": "1",
		"bw": req, "lat": req, "sharing_policy": "SPLITDUPLEX", "topology": "FLAT", "topo_parameters": "", "bb_bw": "",
		"bb_lat": "0s", "bb_sharing_policy": "SHARED", "router_id": "", "limiter_link": "", "loopback_bw": "", "loopback_lat": ""},
		enums: map[string][]string{"sharing_policy": sharingEnum, "topology": {"FLAT", "TORUS", "FAT_TREE", "DRAGONFLY"},
			"bb_sharing_policy": {"SHARED", "FATPIPE"}},
		children: []string{"prop"}},
	"route": {attrs: map[string]string{"src": req, "dst": req, "symmetrical": "YES"},
		enums: map[string][]string{"symmetrical": {"YES", "NO", "yes", "no"}}, children: []string{"link_ctn"}},
	"zoneRoute": {attrs: map[string]string{"src": req, "dst": req, "gw_src": req, "gw_dst": req, "symmetrical": "YES"},
		enums: map[string][]string{"symmetrical": {"YES", "NO", "yes", "no"}}, children: []string{"link_ctn"}},
	"ASroute": {attrs: map[string]string{"src": req, "dst": req, "gw_src": req, "gw_dst": req, "symmetrical": "YES"},
		enums: map[string][]string{"symmetrical": {"YES", "NO", "yes", "no"}}, children: []string{"link_ctn"}},
	"bypassRoute":     {attrs: map[string]string{"src": req, "dst": req}, children: []string{"link_ctn"}},
	"bypassZoneRoute": {attrs: map[string]string{"src": req, "dst": req, "gw_src": req, "gw_dst": req}, children: []string{"link_ctn"}},
	"bypassASroute":   {attrs: map[string]string{"src": req, "dst": req, "gw_src": req, "gw_dst": req}, children: []string{"link_ctn"}},
	"link_ctn": {attrs: map[string]string{"id": req, "direction": "NONE"},
		enums: map[string][]string{"direction": {"UP", "DOWN", "NONE"}}},
	"backbone": {attrs: map[string]string{"id": req, "bandwidth": req, "latency": req}},
	"trace":    {attrs: map[string]string{"id": req, "file": "", "periodicity": req}},
	"trace_connect": {attrs: map[string]string{"kind": "HOST_AVAIL", "trace": req, "element": req},
		enums: map[string][]string{"kind": {"HOST_AVAIL", "SPEED", "LINK_AVAIL", "BANDWIDTH", "LATENCY"}}},
	"host_link": {attrs: map[string]string{"id": req, "up": req, "down": req}},
	"cabinet": {attrs: map[string]string{"id": req, "prefix": req, "suffix": req, "radical": req, "speed": req,
		"bw": req, "lat": req}},
}

// unsupported are SimGrid elements kairos recognises but does not model.
var unsupported = map[string]string{
	"include":      "was removed in SimGrid 3.18",
	"storage":      "was removed in SimGrid 3.27",
	"storage_type": "was removed in SimGrid 3.27",
	"mount":        "was removed in SimGrid 3.27",
	"random":       "is not supported",
	"process":      "(deployment) does not belong in a platform for kairos: use a hostfile",
	"actor":        "(deployment) does not belong in a platform for kairos: use a hostfile",
}

// frame is an open element.
type frame struct {
	name  string
	line  int
	attrs map[string]string
	props props
	refs  []linkRef
	zone  *zone
	mode  string           // for zones: "hosts" or "zones" once decided
	star  *clusterZoneArgs // for routing="Cluster" zones: what they declare
	text  strings.Builder  // for <trace>: its profile
}

// parser turns SAX-like events into builder calls, as surfxml_sax_cb.cpp.
type parser struct {
	b     *builder
	file  string
	stack []*frame
	given map[string]bool // platform settings set by the caller

	traces map[string]*Profile // <trace>s by id
	// profileNames holds the names of the profiles defined so far, a
	// file's by its path as given, a <trace>'s text by its id: SimGrid
	// refuses to define one twice.
	profileNames map[string]bool
	connects     []traceConnect
}

// Parse reads a SimGrid platform XML description; name is used in error
// messages (usually the file name).
func Parse(r io.Reader, name string) (*Platform, error) {
	return ParseWith(r, name, nil)
}

// ParseWith is Parse with settings given on the command line (key to
// value) that shape the platform (IsPlatformSetting): as in SimGrid, they
// win over the file's <config>. Other keys are ignored.
func ParseWith(r io.Reader, name string, settings map[string]string) (*Platform, error) {
	ps := &parser{b: newBuilder(name), file: name, given: map[string]bool{}, traces: map[string]*Profile{}, profileNames: map[string]bool{}}
	for k, v := range settings {
		if !IsPlatformSetting(k) {
			continue
		}
		if err := ps.b.setLoopback(k, v); err != nil {
			return nil, fmt.Errorf("--cfg %s: %w", k, err)
		}
		ps.given[k] = true
	}
	dec := xml.NewDecoder(r)
	dec.Strict = true
	seenRoot := false
	for {
		line, _ := dec.InputPos()
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			var se *xml.SyntaxError
			if errors.As(err, &se) {
				return nil, &Error{File: name, Line: se.Line, Err: fmt.Errorf("malformed XML: %s", se.Msg)}
			}
			return nil, &Error{File: name, Line: line, Err: err}
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if len(ps.stack) == 0 {
				if seenRoot || t.Name.Local != "platform" {
					return nil, &Error{File: name, Line: line, Elem: t.Name.Local, Err: errors.New("expected a single <platform> root element")}
				}
				seenRoot = true
			}
			if err := ps.start(t, line); err != nil {
				return nil, err
			}
		case xml.EndElement:
			if err := ps.end(); err != nil {
				return nil, err
			}
		case xml.CharData:
			if len(ps.stack) > 0 && ps.top().name == "trace" {
				ps.top().text.Write(t)
				continue
			}
			if len(ps.stack) > 0 && strings.TrimSpace(string(t)) != "" {
				return nil, &Error{File: name, Line: line, Elem: ps.top().name, Err: fmt.Errorf("unexpected text %q", strings.TrimSpace(string(t)))}
			}
		}
	}
	if !seenRoot {
		return nil, &Error{File: name, Err: errors.New(`no <platform> element: expected a SimGrid platform description, <platform version="4.1"> ... </platform>`)}
	}
	if err := ps.connectTraces(); err != nil {
		return nil, err
	}
	p, err := ps.b.finish()
	if err != nil {
		return nil, &Error{File: name, Err: err}
	}
	return p, nil
}

func (ps *parser) top() *frame { return ps.stack[len(ps.stack)-1] }

func (ps *parser) errAt(f *frame, attr string, format string, a ...any) error {
	return &Error{File: ps.file, Line: f.line, Elem: f.name, Attr: attr, Err: fmt.Errorf(format, a...)}
}

func (ps *parser) start(t xml.StartElement, line int) error {
	name := t.Name.Local
	f := &frame{name: name, line: line}
	if len(ps.stack) > 0 {
		parent := ps.top()
		if !contains(specs[parent.name].children, name) {
			if _, known := specs[name]; !known && unsupported[name] == "" {
				return ps.errAt(f, "", "unknown element inside <%s> (expected one of %s)", parent.name, childList(parent.name))
			}
			if unsupported[name] == "" {
				return ps.errAt(f, "", "not allowed inside <%s> (expected one of %s)", parent.name, childList(parent.name))
			}
		}
	}
	if why, ok := unsupported[name]; ok {
		return ps.errAt(f, "", "%s", why)
	}
	spec := specs[name]
	if spec == nil {
		return ps.errAt(f, "", "unknown element")
	}
	f.attrs = make(map[string]string, len(spec.attrs))
	for _, a := range t.Attr {
		key := a.Name.Local
		if a.Name.Space != "" && a.Name.Space != "xmlns" {
			key = a.Name.Space + ":" + key
		}
		if _, ok := spec.attrs[key]; !ok {
			return ps.errAt(f, key, "unknown attribute (expected one of %s)", attrList(spec))
		}
		if _, dup := f.attrs[key]; dup {
			return ps.errAt(f, key, "given twice")
		}
		if allowed, ok := spec.enums[key]; ok && !contains(allowed, a.Value) {
			return ps.errAt(f, key, "invalid value %q (expected %s)", a.Value, strings.Join(allowed, ", "))
		}
		f.attrs[key] = a.Value
	}
	for key, def := range spec.attrs {
		if _, ok := f.attrs[key]; ok {
			continue
		}
		if def == req {
			return ps.errAt(f, key, "required attribute is missing")
		}
		f.attrs[key] = def
	}
	ps.stack = append(ps.stack, f)
	return ps.open(f)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func childList(parent string) string {
	var out []string
	for _, c := range specs[parent].children {
		if unsupported[c] == "" {
			out = append(out, "<"+c+">")
		}
	}
	if len(out) == 0 {
		return "nothing"
	}
	return strings.Join(out, ", ")
}

func attrList(spec *elemSpec) string {
	var names []string
	for k := range spec.attrs {
		names = append(names, k)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// open handles a start tag.
func (ps *parser) open(f *frame) error {
	switch f.name {
	case "platform":
		return ps.version(f)
	case "zone", "AS":
		return ps.openZone(f)
	case "host", "router", "cluster", "route", "zoneRoute", "ASroute", "link", "cabinet", "host_link", "peer":
		if err := ps.zoneMode(f); err != nil {
			return err
		}
	}
	if f.name == "host" || f.name == "link" || f.name == "cluster" {
		f.props = props{vals: map[string]string{}, lines: map[string]int{}}
	}
	return nil
}

func (ps *parser) version(f *frame) error {
	v, err := strconv.ParseFloat(strings.TrimSpace(f.attrs["version"]), 64)
	if err != nil {
		return ps.errAt(f, "version", "%q is not a number", f.attrs["version"])
	}
	n := math.Round(100 * v)
	if n < 400 {
		return ps.errAt(f, "version", "version %s is too old: SimGrid 3.32 reads versions 4.0 and 4.1 (convert it with simgrid_update_xml)", f.attrs["version"])
	}
	if n > 410 {
		return ps.errAt(f, "version", "version %s comes from the future: SimGrid 3.32 reads versions up to 4.1", f.attrs["version"])
	}
	return nil
}

// zoneMode enforces SimGrid's DTD: a zone holds either hosts, routers and
// routes, or sub-zones, clusters and zoneRoutes (links go with both).
func (ps *parser) zoneMode(f *frame) error {
	if len(ps.stack) < 2 {
		return nil
	}
	parent := ps.stack[len(ps.stack)-2]
	if parent.zone == nil {
		return nil
	}
	var mode string
	switch f.name {
	case "host", "router", "route", "cabinet", "host_link":
		mode = "hosts"
	case "zone", "AS", "cluster", "zoneRoute", "ASroute", "peer":
		mode = "zones"
	default:
		return nil
	}
	if parent.star != nil && mode == "zones" {
		return ps.errAt(f, "", "not allowed in routing=\"Cluster\" zone %s, which holds hosts, cabinets, routers, links, host_links and a backbone", parent.zone.name)
	}
	if parent.mode != "" && parent.mode != mode {
		return ps.errAt(f, "", "cannot be mixed with <%s> elements in zone %s: a zone holds either hosts, routers and routes, or sub-zones, clusters, peers and zoneRoutes",
			map[string]string{"hosts": "host/router/route", "zones": "zone/cluster/peer/zoneRoute"}[parent.mode], parent.zone.name)
	}
	parent.mode = mode
	return nil
}

func (ps *parser) openZone(f *frame) error {
	if err := ps.zoneMode(f); err != nil {
		return err
	}
	routing := f.attrs["routing"]
	z, err := ps.b.newZone(f.attrs["id"])
	if err != nil {
		return ps.errAt(f, "id", "%v", err)
	}
	switch strings.ToLower(routing) {
	case "full":
		z.rt = &fullZone{z: z, routes: map[[2]int]*zroute{}}
	case "floyd":
		z.rt = &floydZone{p: ps.b.p, z: z, routes: map[[2]int]*zroute{}}
	case "dijkstra", "dijkstracache":
		z.rt = &dijkstraZone{z: z, node: map[int]int{}, pred: map[int][]int{}}
	case "cluster":
		z.rt = &starZone{z: z}
		f.star = &clusterZoneArgs{}
	case "none":
		z.rt = &noneZone{z: z}
	case "vivaldi":
		z.rt = &vivaldiZone{starZone{z: z}}
	case "wifi":
		return ps.errAt(f, "routing", "routing %q is not supported (kairos reads Full, Floyd, Dijkstra, DijkstraCache, Cluster, None and Vivaldi zones, and <cluster>)", routing)
	default:
		return ps.errAt(f, "routing", "%q is not a valid routing model (expected Full, Floyd, Dijkstra, DijkstraCache, Cluster, None, Vivaldi or Wifi)", routing)
	}
	f.zone = z
	ps.b.cur = z
	return nil
}

// end handles an end tag.
func (ps *parser) end() error {
	f := ps.top()
	ps.stack = ps.stack[:len(ps.stack)-1]
	var err error
	switch f.name {
	case "zone", "AS":
		if f.star != nil {
			err = ps.populate(f)
		}
		ps.b.cur = f.zone.parent
	case "backbone", "host_link", "cabinet":
		err = ps.clusterPart(f)
	case "trace":
		err = ps.trace(f)
	case "trace_connect":
		err = ps.traceConnect(f)
	case "prop":
		err = ps.prop(f)
	case "host":
		err = ps.host(f)
	case "disk":
		err = ps.disk(f)
	case "router":
		err = ps.router(f)
	case "peer":
		err = ps.peer(f)
	case "link":
		err = ps.link(f)
	case "cluster":
		err = ps.cluster(f)
	case "link_ctn":
		err = ps.linkCtn(f)
	case "route":
		err = ps.route(f)
	case "zoneRoute", "ASroute":
		err = ps.zoneRoute(f)
	case "bypassRoute", "bypassZoneRoute", "bypassASroute":
		err = ps.bypassRoute(f)
	}
	return err
}

// bypassRoute reads a <bypassRoute> (between hosts or routers) or a
// <bypassZoneRoute> (between zones, through gateways), which the current
// zone uses instead of its routes where it is the common ancestor of a
// route's ends (NetZoneImpl::add_bypass_route).
func (ps *parser) bypassRoute(f *frame) error {
	z := ps.b.cur
	attrs := []string{"src", "dst"}
	if f.name != "bypassRoute" {
		attrs = append(attrs, "gw_src", "gw_dst")
	}
	var nps [4]*netpoint
	for i, attr := range attrs {
		np, err := ps.endpoint(f, attr)
		if err != nil {
			return err
		}
		nps[i] = np
	}
	key := [2]*netpoint{nps[0], nps[1]}
	if len(f.refs) == 0 {
		return ps.errAt(f, "", "bypass route between %s and %s cannot be empty", key[0].name, key[1].name)
	}
	if z.bypass == nil {
		z.bypass = map[[2]*netpoint]*zroute{}
	}
	if _, dup := z.bypass[key]; dup {
		return ps.errAt(f, "", "the bypass route between %s and %s already exists", key[0].name, key[1].name)
	}
	z.bypass[key] = &zroute{links: resolve(f.refs, false), gwSrc: nps[2], gwDst: nps[3]}
	return nil
}

func (ps *parser) prop(f *frame) error {
	parent := ps.top()
	key, val := f.attrs["id"], f.attrs["value"]
	switch {
	case parent.name == "config":
		return ps.config(f, key, val)
	case parent.props.vals != nil:
		if _, dup := parent.props.vals[key]; !dup { // SimGrid keeps the first one
			parent.props.vals[key] = val
			parent.props.lines[key] = f.line
		}
	}
	return nil
}

// IsPlatformSetting reports whether a <config> setting shapes the
// platform itself (the loopback link), and is applied when it is read.
func IsPlatformSetting(key string) bool {
	return key == "network/loopback-bw" || key == "network/loopback-lat"
}

func (ps *parser) config(f *frame, key, val string) error {
	ps.b.p.Config[key] = val
	ps.b.p.ConfigLines[key] = f.line
	if IsPlatformSetting(key) && !ps.given[key] {
		if err := ps.b.setLoopback(key, val); err != nil {
			return ps.errAt(f, "value", "%s: %v", key, err)
		}
	}
	return nil
}

// quantity parses an attribute with units, recording SimGrid's warnings.
func (ps *parser) quantity(f *frame, attr string, q quantity) (float64, error) {
	v, warn, err := q.parse(f.attrs[attr])
	if err != nil {
		return 0, ps.errAt(f, attr, "%v", err)
	}
	if warn != "" {
		ps.warn(f, attr, warn)
	}
	return v, nil
}

// warn records what SimGrid would log as a warning.
func (ps *parser) warn(f *frame, attr, msg string) {
	ps.b.p.Warnings = append(ps.b.p.Warnings, fmt.Sprintf("%s:%d: <%s> attribute %s: %s", ps.file, f.line, f.name, attr, msg))
}

func (ps *parser) noProfiles(f *frame, attrs ...string) error {
	for _, a := range attrs {
		if f.attrs[a] != "" {
			return ps.errAt(f, a, "availability profiles are not supported (a host or link that fails aborts an MPI replay)")
		}
	}
	return nil
}

func (ps *parser) host(f *frame) error {
	if err := ps.noProfiles(f, "state_file"); err != nil {
		return err
	}
	speeds, err := ps.speeds(f)
	if err != nil {
		return err
	}
	cores, err := cInt(f.attrs["core"])
	if err != nil {
		return ps.errAt(f, "core", "%v", err)
	}
	pstate, err := cInt(f.attrs["pstate"])
	if err != nil {
		return ps.errAt(f, "pstate", "%v", err)
	}
	if pstate < 0 || pstate >= len(speeds) {
		return ps.errAt(f, "pstate", "pstate %d does not exist (the host has %d speeds)", pstate, len(speeds))
	}
	h, err := ps.b.newHost(ps.b.cur, f.attrs["id"], speeds[pstate], cores, f.props)
	if err != nil {
		return ps.errAt(f, "id", "%v", err)
	}
	h.PState, h.PStates = pstate, len(speeds)
	return ps.hostExtras(f, h)
}

// hostExtras reads a <host>'s or <peer>'s coordinates and speed profile
// (speed_file, or the deprecated availability_file).
func (ps *parser) hostExtras(f *frame, h *Host) error {
	if err := ps.coords(f, h.np); err != nil {
		return err
	}
	for _, attr := range []string{"availability_file", "speed_file"} {
		if f.attrs[attr] == "" {
			continue
		}
		if attr == "availability_file" {
			ps.warn(f, attr, "availability_file is deprecated, read as speed_file")
		}
		p, err := ps.readProfileFile(f, attr)
		if err != nil {
			return err
		}
		h.SpeedProfile = p
	}
	return nil
}

// coords reads the coordinates attribute of a host, peer or router.
func (ps *parser) coords(f *frame, np *netpoint) error {
	if c := f.attrs["coordinates"]; c != "" {
		v, err := parseCoords(c)
		if err != nil {
			return ps.errAt(f, "coordinates", "%v", err)
		}
		np.coords = v
	}
	return nil
}

func (ps *parser) router(f *frame) error {
	np, err := ps.b.newNetpoint(ps.b.cur, f.attrs["id"], npRouter)
	if err != nil {
		return ps.errAt(f, "id", "%v", err)
	}
	return ps.coords(f, np)
}

// peer reads a <peer> of a Vivaldi zone (sg_platf_new_peer): a one-core
// host, and its links to the center, "link_<id>_UP" (bw_out) and
// "link_<id>_DOWN" (bw_in), without latency.
func (ps *parser) peer(f *frame) error {
	z := ps.b.cur
	if z == nil {
		return ps.errAt(f, "", "a <peer> belongs in a Vivaldi zone")
	}
	v, ok := z.rt.(*vivaldiZone)
	if !ok {
		return ps.errAt(f, "", "a <peer> belongs in a Vivaldi zone, not in zone %s", z.name)
	}
	if err := ps.noProfiles(f, "state_file"); err != nil {
		return err
	}
	if f.attrs["lat"] != "" {
		ps.warn(f, "lat", "the latency of a <peer> is deprecated and ignored: give it as the third coordinate")
	}
	speed, warn, err := speedQ.parse(strings.TrimSpace(f.attrs["speed"]))
	if err != nil {
		return ps.errAt(f, "speed", "%v", err)
	}
	if warn != "" {
		ps.warn(f, "speed", warn)
	}
	var bw [2]float64
	for i, attr := range []string{"bw_in", "bw_out"} {
		if bw[i], err = ps.quantity(f, attr, bandwidthQ); err != nil {
			return err
		}
	}
	id := f.attrs["id"]
	h, err := ps.b.newHost(z, id, speed, 1, props{})
	if err != nil {
		return ps.errAt(f, "id", "%v", err)
	}
	if err := ps.hostExtras(f, h); err != nil {
		return err
	}
	up, err := ps.b.newLink("link_"+id+"_UP", bw[1], 0, Shared)
	if err != nil {
		return ps.errAt(f, "id", "%v", err)
	}
	down, err := ps.b.newLink("link_"+id+"_DOWN", bw[0], 0, Shared)
	if err != nil {
		return ps.errAt(f, "id", "%v", err)
	}
	n := v.node(h.np.id)
	n.up, n.down, n.noUp, n.noDown = []*Link{up}, []*Link{down}, false, false
	return nil
}

// speeds reads the speed attribute: one speed per pstate, comma-separated.
func (ps *parser) speeds(f *frame) ([]float64, error) {
	var speeds []float64
	for _, s := range strings.Split(f.attrs["speed"], ",") {
		v, warn, err := speedQ.parse(strings.TrimSpace(s))
		if err != nil {
			return nil, ps.errAt(f, "speed", "%v", err)
		}
		if warn != "" {
			ps.warn(f, "speed", warn)
		}
		speeds = append(speeds, v)
	}
	return speeds, nil
}

// disk is read for validity only: the simulator does no I/O.
func (ps *parser) disk(f *frame) error {
	for _, a := range []string{"read_bw", "write_bw"} {
		if _, err := ps.quantity(f, a, bandwidthQ); err != nil {
			return err
		}
	}
	return nil
}

func (ps *parser) link(f *frame) error {
	if err := ps.noProfiles(f, "state_file"); err != nil {
		return err
	}
	id := f.attrs["id"]
	if strings.ContainsAny(f.attrs["bandwidth"], ",;") {
		return ps.errAt(f, "bandwidth", "several bandwidths are only for WIFI links, which are not supported")
	}
	bw, lat, err := ps.bandwidthLatency(f)
	if err != nil {
		return err
	}
	var l, down *Link
	switch f.attrs["sharing_policy"] {
	case "SHARED":
		l, err = ps.b.newLink(id, bw, lat, Shared)
	case "FATPIPE":
		l, err = ps.b.newLink(id, bw, lat, FatPipe)
	case "SPLITDUPLEX", "FULLDUPLEX":
		if f.attrs["sharing_policy"] == "FULLDUPLEX" {
			ps.warn(f, "sharing_policy", "FULLDUPLEX is deprecated, read as SPLITDUPLEX")
		}
		l, down, err = ps.b.newDuplex(id, bw, lat)
	default:
		return ps.errAt(f, "sharing_policy", "WIFI links are not supported")
	}
	if err != nil {
		return ps.errAt(f, "id", "%v", err)
	}
	if down == nil && len(f.props.vals) > 0 {
		// SimGrid keeps a SPLITDUPLEX link's properties on the pair, not
		// on its halves.
		l.Props, l.PropLines = f.props.vals, f.props.lines
	}
	return ps.linkProfiles(f, l, down)
}

// linkProfiles reads a <link>'s bandwidth_file and latency_file, for both
// halves of a SPLITDUPLEX link (down not nil).
func (ps *parser) linkProfiles(f *frame, l, down *Link) error {
	for _, attr := range []string{"bandwidth_file", "latency_file"} {
		if f.attrs[attr] == "" {
			continue
		}
		p, err := ps.readProfileFile(f, attr)
		if err != nil {
			return err
		}
		for _, h := range []*Link{l, down} {
			if h == nil {
				continue
			}
			if attr == "bandwidth_file" {
				h.BandwidthProfile = p
			} else {
				h.LatencyProfile = p
			}
		}
	}
	return nil
}

// bandwidthLatency reads the bandwidth and latency attributes of a link or
// backbone.
func (ps *parser) bandwidthLatency(f *frame) (bw, lat float64, err error) {
	if bw, err = ps.quantity(f, "bandwidth", bandwidthQ); err != nil {
		return 0, 0, err
	}
	lat, err = ps.quantity(f, "latency", timeQ)
	return bw, lat, err
}

func (ps *parser) cluster(f *frame) error {
	a := &clusterArgs{
		id: f.attrs["id"], prefix: f.attrs["prefix"], suffix: f.attrs["suffix"],
		sharing: f.attrs["sharing_policy"], topology: f.attrs["topology"], topoParams: f.attrs["topo_parameters"],
		routerID: f.attrs["router_id"], props: f.props, bbSharing: Shared,
	}
	if a.sharing == "FULLDUPLEX" {
		ps.warn(f, "sharing_policy", "FULLDUPLEX is deprecated, read as SPLITDUPLEX")
		a.sharing = "SPLITDUPLEX"
	}
	if f.attrs["bb_sharing_policy"] == "FATPIPE" {
		a.bbSharing = FatPipe
	}
	var err error
	if a.radicals, err = parseRadical(f.attrs["radical"]); err != nil {
		return ps.errAt(f, "radical", "%v", err)
	}
	speeds, err := ps.speeds(f)
	if err != nil {
		return err
	}
	a.speed, a.pstates = speeds[0], len(speeds) // hosts start in pstate 0
	if a.cores, err = cInt(f.attrs["core"]); err != nil {
		return ps.errAt(f, "core", "%v", err)
	}
	fields := []struct {
		attr string
		q    quantity
		dst  *float64
	}{
		{"bw", bandwidthQ, &a.bw}, {"lat", timeQ, &a.lat}, {"bb_bw", bandwidthQ, &a.bbBW}, {"bb_lat", timeQ, &a.bbLat},
		{"limiter_link", bandwidthQ, &a.limiter}, {"loopback_bw", bandwidthQ, &a.loopbackBW}, {"loopback_lat", timeQ, &a.loopbackLat},
	}
	for _, fl := range fields {
		if f.attrs[fl.attr] == "" && fl.attr != "bw" && fl.attr != "lat" {
			continue
		}
		if *fl.dst, err = ps.quantity(f, fl.attr, fl.q); err != nil {
			return err
		}
	}
	if err := ps.b.addCluster(a); err != nil {
		attr := ""
		if a.topology != "FLAT" {
			attr = "topo_parameters"
		}
		return ps.errAt(f, attr, "%v", err)
	}
	return nil
}

func (ps *parser) linkCtn(f *frame) error {
	id := f.attrs["id"]
	var ref linkRef
	switch f.attrs["direction"] {
	case "NONE":
		l, ok := ps.b.links[id]
		if !ok {
			if _, dup := ps.b.duplex[id]; dup {
				return ps.errAt(f, "direction", "link %q is SPLITDUPLEX: say direction=\"UP\" or \"DOWN\" (or use %s_UP / %s_DOWN)", id, id, id)
			}
			return ps.errAt(f, "id", "no such link %q", id)
		}
		ref = linkRef{link: l}
	case "UP", "DOWN":
		pair, ok := ps.b.duplex[id]
		if !ok {
			return ps.errAt(f, "id", "no SPLITDUPLEX link %q (direction %s needs one)", id, f.attrs["direction"])
		}
		ref = linkRef{up: pair[0], down: pair[1], dir: dirUp}
		if f.attrs["direction"] == "DOWN" {
			ref.dir = dirDown
		}
	}
	parent := ps.top()
	parent.refs = append(parent.refs, ref)
	return nil
}

// routeAdder is implemented by the zones that take declared routes.
type routeAdder interface {
	addRoute(src, dst *netpoint, refs []linkRef, gwSrc, gwDst *netpoint, symmetrical bool) error
}

func (ps *parser) endpoint(f *frame, attr string) (*netpoint, error) {
	name := f.attrs[attr]
	np, ok := ps.b.netpoints[name]
	if !ok {
		return nil, ps.errAt(f, attr, "%q does not name a host, router or zone", name)
	}
	return np, nil
}

func (ps *parser) route(f *frame) error {
	z := ps.b.cur
	src, err := ps.endpoint(f, "src")
	if err != nil {
		return err
	}
	dst, err := ps.endpoint(f, "dst")
	if err != nil {
		return err
	}
	for _, e := range []struct {
		np   *netpoint
		attr string
	}{{src, "src"}, {dst, "dst"}} {
		if e.np.kind == npZone {
			return ps.errAt(f, e.attr, "%q is a zone: use <zoneRoute> with gateways", e.np.name)
		}
		if e.np.zone != z {
			return ps.errAt(f, e.attr, "%q is not in zone %s", e.np.name, z.name)
		}
	}
	if len(f.refs) == 0 {
		return ps.errAt(f, "", "empty route between %s and %s", src.name, dst.name)
	}
	if err := z.rt.(routeAdder).addRoute(src, dst, f.refs, nil, nil, isYes(f.attrs["symmetrical"])); err != nil {
		return ps.errAt(f, "", "%v", err)
	}
	return nil
}

func isYes(s string) bool { return s == "YES" || s == "yes" }

func (ps *parser) zoneRoute(f *frame) error {
	z := ps.b.cur
	var nps [4]*netpoint
	for i, attr := range []string{"src", "dst", "gw_src", "gw_dst"} {
		np, err := ps.endpoint(f, attr)
		if err != nil {
			return err
		}
		nps[i] = np
	}
	src, dst, gwSrc, gwDst := nps[0], nps[1], nps[2], nps[3]
	for i, attr := range []string{"src", "dst"} {
		if nps[i].kind != npZone || nps[i].zone != z {
			return ps.errAt(f, attr, "%q is not a sub-zone of zone %s", nps[i].name, z.name)
		}
	}
	for i, attr := range []string{"gw_src", "gw_dst"} {
		gw, inside := nps[i+2], nps[i].sub
		if gw.kind == npZone {
			return ps.errAt(f, attr, "gateway %q must be a host or a router", gw.name)
		}
		if !within(gw, inside) {
			return ps.errAt(f, attr, "gateway %q is not inside zone %s", gw.name, inside.name)
		}
	}
	if gwSrc == gwDst {
		return ps.errAt(f, "gw_dst", "a zoneRoute cannot go from %q to itself", gwSrc.name)
	}
	if len(f.refs) == 0 {
		return ps.errAt(f, "", "empty route between %s and %s", src.name, dst.name)
	}
	if err := z.rt.(routeAdder).addRoute(src, dst, f.refs, gwSrc, gwDst, isYes(f.attrs["symmetrical"])); err != nil {
		return ps.errAt(f, "", "%v", err)
	}
	return nil
}

// within reports whether np lies in z or one of its sub-zones.
func within(np *netpoint, z *zone) bool {
	for c := np.zone; c != nil; c = c.parent {
		if c == z {
			return true
		}
	}
	return false
}

// clusterPart reads a <backbone>, <host_link> or <cabinet>, which SimGrid
// acts on only when their routing="Cluster" zone closes.
func (ps *parser) clusterPart(f *frame) error {
	zf := ps.top()
	if zf.star == nil {
		return ps.errAt(f, "", "belongs in a routing=\"Cluster\" zone")
	}
	a := zf.star
	switch f.name {
	case "backbone":
		if a.backbone != nil {
			return ps.errAt(f, "", "zone %s already has a backbone (%s, line %d)", zf.zone.name, a.backbone.id, a.backbone.line)
		}
		bw, lat, err := ps.bandwidthLatency(f)
		if err != nil {
			return err
		}
		a.backbone = &backboneArgs{id: f.attrs["id"], bw: bw, lat: lat, line: f.line}
	case "host_link":
		a.hostLinks = append(a.hostLinks, hostLinkArgs{host: f.attrs["id"], up: f.attrs["up"], down: f.attrs["down"], line: f.line})
	case "cabinet":
		c := cabinetArgs{id: f.attrs["id"], prefix: f.attrs["prefix"], suffix: f.attrs["suffix"], line: f.line}
		var err error
		if c.radicals, err = parseRadical(f.attrs["radical"]); err != nil {
			return ps.errAt(f, "radical", "%v", err)
		}
		for _, q := range []struct {
			attr string
			q    quantity
			dst  *float64
		}{{"speed", speedQ, &c.speed}, {"bw", bandwidthQ, &c.bw}, {"lat", timeQ, &c.lat}} {
			if *q.dst, err = ps.quantity(f, q.attr, q.q); err != nil {
				return err
			}
		}
		a.cabinets = append(a.cabinets, c)
	}
	return nil
}

// populate builds a closing Cluster zone from what it declared.
func (ps *parser) populate(f *frame) error {
	err := ps.b.populateClusterZone(f.zone, f.zone.rt.(*starZone), f.star)
	if ze, ok := err.(*zoneError); ok {
		return &Error{File: ps.file, Line: ze.line, Elem: ze.elem, Attr: ze.attr, Err: ze.err}
	}
	return err
}
