package clock

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"kairos/trace"
)

// Interconnect is a network technology characterised by its bandwidth and
// latency, (BW, L) (Section III-G).
type Interconnect struct {
	Name  string `json:"name"`  // short name, as flags spell it: "1gbe"
	Label string `json:"label"` // column of Table IV: "ENET-1G"
	Config
}

// Interconnects are the three interconnects of Table I.
var Interconnects = []Interconnect{
	{Name: "1gbe", Label: "ENET-1G", Config: Config{BW: 1, Lat: 50}},
	{Name: "10gbe", Label: "ENET-10G", Config: Config{BW: 10, Lat: 5}},
	{Name: "qdr", Label: "QDR", Config: Config{BW: 32, Lat: 1.3}},
}

// ParseInterconnect parses a named interconnect of Table I ("1gbe",
// "10gbe", "qdr"), a "BW,L" pair (Gbit/s, microseconds), or "NAME=BW,L".
func ParseInterconnect(s string) (Interconnect, error) {
	s = strings.TrimSpace(s)
	for _, ic := range Interconnects {
		if strings.EqualFold(s, ic.Name) || strings.EqualFold(s, ic.Label) {
			return ic, nil
		}
	}
	name, pair, named := strings.Cut(s, "=")
	if !named {
		pair = s
	}
	c, err := ParseConfig(pair)
	if err != nil {
		return Interconnect{}, fmt.Errorf("interconnect %q: want 1gbe, 10gbe, qdr, \"BW,L\" or \"NAME=BW,L\": %w", s, err)
	}
	if !named {
		name = c.String()
	}
	return Interconnect{Name: name, Label: name, Config: c}, nil
}

// ParseConfig parses "BW,L" (also "BW L" or "(BW, L)"): a bandwidth in
// Gbit/s and a latency in microseconds.
func ParseConfig(s string) (Config, error) {
	s = strings.Trim(strings.TrimSpace(s), "()")
	f := strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' })
	if len(f) != 2 {
		return Config{}, fmt.Errorf("want \"BW,L\" (Gbit/s, microseconds), got %q", s)
	}
	bw, err1 := strconv.ParseFloat(f[0], 64)
	lat, err2 := strconv.ParseFloat(f[1], 64)
	c := Config{BW: bw, Lat: lat}
	if err1 != nil || err2 != nil || !c.Valid() {
		return Config{}, fmt.Errorf("want a positive bandwidth in Gbit/s and a non-negative latency in microseconds, got %q", s)
	}
	return c, nil
}

// ParseConfigs reads network configurations, one "BW,L" pair a line
// (Gbit/s, microseconds; blanks also separate them); blank lines and
// lines starting with '#' are skipped. name names the input in errors.
func ParseConfigs(r io.Reader, name string) ([]Config, error) {
	var cs []Config
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for line := 1; sc.Scan(); line++ {
		s := strings.TrimSpace(sc.Text())
		if s == "" || s[0] == '#' {
			continue
		}
		c, err := ParseConfig(s)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, line, err)
		}
		cs = append(cs, c)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(cs) == 0 {
		return nil, fmt.Errorf("%s: no configuration", name)
	}
	return cs, nil
}

// Sweep is one of the three sets of seven configurations of Table III.
type Sweep uint8

// The sets, in Table III's order; NoSweep marks a configuration outside
// them.
const (
	NoSweep        Sweep = iota
	LatencySweep         // (BW, L/8) .. (BW, 8L)
	BandwidthSweep       // (BW/8, L) .. (8BW, L)
	JointSweep           // (BW/8, 8L) .. (8BW, L/8)
)

// String returns Table III's name of the set: "Latency", "BW", "COMM".
func (s Sweep) String() string {
	return [...]string{"", "Latency", "BW", "COMM"}[s]
}

// MarshalText writes the set's name, for JSON.
func (s Sweep) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// Point is one configuration of a sweep. Scale is how much faster than
// (BW, L) the network is, from 1/8 to 8: the x axis of the paper's
// Figures 4-6 (X/8 .. 8X). Outside of sweeps both are zero.
type Point struct {
	Sweep Sweep   `json:"sweep,omitempty"`
	Scale float64 `json:"scale,omitempty"`
	Config
}

// ScaleLabel returns the scale as the paper's figures write it: "X/8",
// "X", "4X".
func (p Point) ScaleLabel() string {
	switch {
	case p.Scale == 0:
		return ""
	case p.Scale == 1:
		return "X"
	case p.Scale < 1:
		return "X/" + strconv.FormatFloat(1/p.Scale, 'g', -1, 64)
	}
	return strconv.FormatFloat(p.Scale, 'g', -1, 64) + "X"
}

// Sweeps returns the 21 configurations of Table III for ic, in the
// table's order: the latency set from L/8 to 8L, the bandwidth set from
// BW/8 to 8BW, the joint set from (BW/8, 8L) to (8BW, L/8).
func (ic Interconnect) Sweeps() []Point {
	pts := make([]Point, 0, 21)
	for k := 3; k >= -3; k-- { // latency L/8 .. 8L
		s := math.Ldexp(1, k)
		pts = append(pts, Point{LatencySweep, s, Config{BW: ic.BW, Lat: ic.Lat / s}})
	}
	for k := -3; k <= 3; k++ {
		s := math.Ldexp(1, k)
		pts = append(pts, Point{BandwidthSweep, s, Config{BW: ic.BW * s, Lat: ic.Lat}})
	}
	for k := -3; k <= 3; k++ {
		s := math.Ldexp(1, k)
		pts = append(pts, Point{JointSweep, s, Config{BW: ic.BW * s, Lat: ic.Lat / s}})
	}
	return pts
}

// Thresholds are the parameters of rules C1-C5 (Section IV-C).
type Thresholds struct {
	Comp          float64 `json:"computation_share"`   // C1: least computation share (0.90)
	Wait          float64 `json:"wait_share"`          // C2: least wait share (0.25)
	Comm          float64 `json:"communication_share"` // C3-C5: least communication share (0.25)
	CommSensitive float64 `json:"sensitive_share"`     // least communication (or wait) share of the "-sensitive" classes (0.10)
	Insensitive   float64 `json:"insensitive"`         // largest relative change that counts as insensitive (0.05)
	Factor        float64 `json:"factor"`              // least decrease over the ranges (2)
}

// DefaultThresholds returns the paper's thresholds.
func DefaultThresholds() Thresholds {
	return Thresholds{Comp: 0.90, Wait: 0.25, Comm: 0.25, CommSensitive: 0.10, Insensitive: 0.05, Factor: 2}
}

// Prediction is what the replay predicts for one configuration: the
// execution time and the four counters summed over ranks, in seconds.
type Prediction struct {
	Point
	Time      float64 `json:"time"`
	Comp      float64 `json:"computation"`
	Wait      float64 `json:"wait"`
	Latency   float64 `json:"latency"`
	Bandwidth float64 `json:"bandwidth"`
	IO        float64 `json:"io,omitempty"` // MPI-IO time, neither computation nor communication
	RankTime  float64 `json:"rank_time"`    // sum over ranks of the final clocks
}

// Comm returns wait + latency + bandwidth time.
func (p Prediction) Comm() float64 { return p.Wait + p.Latency + p.Bandwidth }

// Evidence are the shares and ratios rules C1-C5 test. Shares are of the
// ranks' summed time at (BW, L); variations are the largest relative
// difference from (BW, L) over a set; ratios compare the communication
// time on either side of (BW, L). Infinite values are written as 1e9.
type Evidence struct {
	Time           float64 `json:"time"` // predicted execution time at (BW, L)
	CompShare      float64 `json:"computation_share"`
	WaitShare      float64 `json:"wait_share"`
	LatencyShare   float64 `json:"latency_share"`
	BandwidthShare float64 `json:"bandwidth_share"`
	CommShare      float64 `json:"communication_share"`
	IOShare        float64 `json:"io_share,omitempty"`           // MPI-IO, as recorded
	TimeVariation  float64 `json:"time_variation"`               // C1: total time over all 21 configurations
	WaitVariation  float64 `json:"wait_variation"`               // C2: wait time over all 21 configurations
	CommVarLatency float64 `json:"comm_variation_latency_sweep"` // C3: communication over the latency set
	CommVarBW      float64 `json:"comm_variation_bandwidth_sweep"`
	BWRatio        float64 `json:"bandwidth_ratio"` // C3: comm(BW/2, L) / comm(2BW, L)
	LatencyRatio   float64 `json:"latency_ratio"`   // C4: comm(BW, 2L) / comm(BW, L/2)
	JointRatio     float64 `json:"joint_ratio"`     // C5: comm(BW/2, 2L) / comm(2BW, L/2)
}

// RuleCheck is the outcome of one rule.
type RuleCheck struct {
	Rule  string `json:"rule"` // "C1".."C5"
	Name  string `json:"name"`
	Holds bool   `json:"holds"`
	Why   string `json:"why"`
}

// Verdict is the classification of a trace for one interconnect.
type Verdict struct {
	Interconnect Interconnect `json:"interconnect"`
	// Class is Table IV's short name: "Comp.", "Imb.", "BW", "Latency",
	// "Comm.", the "-s" (sensitive) variants "Imb.-s", "BW-s",
	// "Latency-s", "Comm.-s", or "Unclassified" when no rule holds; and
	// "I/O" where communication is below the sensitivity threshold and
	// MPI-IO takes more of the time than computation (Table IV has no
	// I/O, which C1's "computation-bound" would otherwise name).
	Class       string       `json:"class"`
	Description string       `json:"description"`
	Evidence    Evidence     `json:"evidence"`
	Rules       []RuleCheck  `json:"rules"`
	Predictions []Prediction `json:"predictions"` // the 21 configurations of Table III
}

// Classification is a trace's verdicts on several interconnects.
type Classification struct {
	Ranks      int        `json:"ranks"`
	Events     int64      `json:"events"`
	Configs    int        `json:"configurations"` // distinct configurations replayed
	Thresholds Thresholds `json:"thresholds"`
	Verdicts   []Verdict  `json:"verdicts"`
	// Extra are the predictions of the configurations asked for besides
	// the interconnects' sweeps.
	Extra []Prediction `json:"extra,omitempty"`
	// Unmatched are the messages the replay found no partner for
	// (Result.Unmatched).
	Unmatched *UnmatchedError `json:"unmatched,omitempty"`
}

// Classify replays src once for the 21 configurations of every
// interconnect and classifies it for each (Section III-G). The
// configurations of opt.Configs are predicted in the same pass, into
// Extra.
func Classify(src trace.Source, ics []Interconnect, opt Options, th Thresholds) (*Classification, error) {
	if len(ics) == 0 {
		return nil, fmt.Errorf("clock: no interconnect to classify for")
	}
	index := map[Config]int{}
	extra := opt.Configs
	opt.Configs = nil
	for _, c := range extra {
		if _, ok := index[c]; !ok {
			index[c] = len(opt.Configs)
			opt.Configs = append(opt.Configs, c)
		}
	}
	for _, ic := range ics {
		for _, p := range ic.Sweeps() {
			if _, ok := index[p.Config]; !ok {
				index[p.Config] = len(opt.Configs)
				opt.Configs = append(opt.Configs, p.Config)
			}
		}
	}
	res, err := Replay(src, opt)
	if err != nil {
		return nil, err
	}
	cl := &Classification{Ranks: res.Ranks, Events: res.Events, Configs: len(opt.Configs), Thresholds: th, Unmatched: res.Unmatched}
	for _, ic := range ics {
		var preds []Prediction
		for _, p := range ic.Sweeps() {
			preds = append(preds, res.prediction(p, index[p.Config]))
		}
		cl.Verdicts = append(cl.Verdicts, Decide(ic, preds, th))
	}
	for _, c := range extra {
		cl.Extra = append(cl.Extra, res.prediction(Point{Config: c}, index[c]))
	}
	return cl, nil
}

// prediction returns configuration i's prediction, as point p.
func (r *Result) prediction(p Point, i int) Prediction {
	return Prediction{Point: p, Time: r.Time[i], Comp: r.Comp[i], Wait: r.Wait[i],
		Latency: r.Lat[i], Bandwidth: r.BW[i], IO: r.IO[i], RankTime: r.RankTime[i]}
}

// find returns the prediction of sweep s at scale k.
func find(preds []Prediction, s Sweep, k float64) Prediction {
	for _, p := range preds {
		if p.Sweep == s && p.Scale == k {
			return p
		}
	}
	panic(fmt.Sprintf("clock: no %v point at scale %g", s, k))
}

// Decide applies rules C1-C5 of Section IV-C to the predictions of ic's
// 21 configurations.
func Decide(ic Interconnect, preds []Prediction, th Thresholds) Verdict {
	base := find(preds, BandwidthSweep, 1)
	ev := evidence(preds, base)
	v := Verdict{Interconnect: ic, Evidence: ev, Predictions: preds}
	level, share := "", ev.CommShare
	switch {
	case share >= th.Comm:
		level = "bound"
	case share >= th.CommSensitive:
		level = "sensitive"
	}
	waitMin := th.Wait
	if level == "sensitive" {
		waitMin = th.CommSensitive
	}
	commMin := th.Comm
	if level != "bound" {
		commMin = th.CommSensitive
	}
	c1 := ev.CompShare >= th.Comp && ev.TimeVariation < th.Insensitive
	c2 := ev.WaitShare >= waitMin && ev.WaitVariation < th.Insensitive
	c3 := share >= commMin && ev.CommVarLatency < th.Insensitive && ev.BWRatio >= th.Factor
	c4 := share >= commMin && ev.CommVarBW < th.Insensitive && ev.LatencyRatio >= th.Factor
	c5 := share >= commMin && ev.JointRatio >= th.Factor
	v.Rules = []RuleCheck{
		{"C1", "computation-bound", c1, fmt.Sprintf("computation %s; total time varies %s over the 21 configurations",
			against(ev.CompShare, th.Comp, pctIn), against(ev.TimeVariation, th.Insensitive, pctIn))},
		{"C2", "load-imbalance", c2, fmt.Sprintf("wait %s; wait varies %s over the 21 configurations",
			against(ev.WaitShare, waitMin, pctIn), against(ev.WaitVariation, th.Insensitive, pctIn))},
		{"C3", "bandwidth", c3, fmt.Sprintf("communication %s; varies %s over the latency set; falls %s from BW/2 to 2BW",
			against(share, commMin, pctIn), against(ev.CommVarLatency, th.Insensitive, pctIn), against(ev.BWRatio, th.Factor, timesIn))},
		{"C4", "latency", c4, fmt.Sprintf("communication %s; varies %s over the bandwidth set; falls %s from 2L to L/2",
			against(share, commMin, pctIn), against(ev.CommVarBW, th.Insensitive, pctIn), against(ev.LatencyRatio, th.Factor, timesIn))},
		{"C5", "communication", c5, fmt.Sprintf("communication %s; falls %s from (BW/2, 2L) to (2BW, L/2)",
			against(share, commMin, pctIn), against(ev.JointRatio, th.Factor, timesIn))},
	}
	suffix, desc := "", "-bound"
	if level == "sensitive" {
		suffix, desc = "-s", "-sensitive"
	}
	switch {
	case c1:
		v.Class, v.Description = "Comp.", "computation-bound"
	case level == "" && ev.IOShare > ev.CompShare:
		v.Class, v.Description = "I/O", "I/O-bound: MPI-IO "+pct(ev.IOShare)+" of the time, computation "+pct(ev.CompShare)+
			", communication "+pct(share)+" below "+pct(th.CommSensitive)
	case level == "":
		v.Class, v.Description = "Comp.", "computation-bound: communication "+pct(share)+" below "+pct(th.CommSensitive)
		if !c1 && ev.TimeVariation >= th.Insensitive {
			v.Description += ", though the total time moves " + pct(ev.TimeVariation) + " over the sets"
		}
	case c2:
		v.Class, v.Description = "Imb."+suffix, "load-imbalance"+desc
	case c3:
		v.Class, v.Description = "BW"+suffix, "bandwidth"+desc
	case c4:
		v.Class, v.Description = "Latency"+suffix, "latency"+desc
	case c5:
		v.Class, v.Description = "Comm."+suffix, "communication"+desc
	case ev.IOShare > max(ev.CompShare, share):
		v.Class, v.Description = "I/O", "I/O-bound: MPI-IO "+pct(ev.IOShare)+" of the time, more than computation ("+
			pct(ev.CompShare)+") and communication ("+pct(share)+"), no communication rule holding"
	default:
		v.Class, v.Description = "Unclassified", "no rule holds"
	}
	return v
}

// against writes x, how it compares with the threshold t (">=" or "<")
// and t, in the units of format with the fewest decimals, from one to six,
// that tell x from t where they differ: a share just under its threshold
// reads 9.99% < 10.00%, not 10.0% < 10.0%.
func against(x, t float64, format func(v float64, decimals int) string) string {
	d := 1
	for d < 6 && x != t && format(x, d) == format(t, d) {
		d++
	}
	op := "<"
	if x >= t {
		op = ">="
	}
	return format(x, d) + " " + op + " " + format(t, d)
}

// pctIn and timesIn format a share as a percentage and a ratio as a
// factor, with d decimals.
func pctIn(v float64, d int) string   { return strconv.FormatFloat(100*v, 'f', d, 64) + "%" }
func timesIn(v float64, d int) string { return strconv.FormatFloat(v, 'f', d+1, 64) + "x" }

// evidence computes the shares, variations and ratios of the rules.
func evidence(preds []Prediction, base Prediction) Evidence {
	ev := Evidence{Time: base.Time}
	if t := base.RankTime; t > 0 {
		ev.CompShare, ev.WaitShare = base.Comp/t, base.Wait/t
		ev.LatencyShare, ev.BandwidthShare = base.Latency/t, base.Bandwidth/t
		ev.CommShare = base.Comm() / t
		ev.IOShare = base.IO / t
	}
	for _, p := range preds {
		ev.TimeVariation = math.Max(ev.TimeVariation, variation(p.Time, base.Time))
		ev.WaitVariation = math.Max(ev.WaitVariation, variation(p.Wait, base.Wait))
		switch p.Sweep {
		case LatencySweep:
			ev.CommVarLatency = math.Max(ev.CommVarLatency, variation(p.Comm(), base.Comm()))
		case BandwidthSweep:
			ev.CommVarBW = math.Max(ev.CommVarBW, variation(p.Comm(), base.Comm()))
		}
	}
	comm := func(s Sweep, k float64) float64 { return find(preds, s, k).Comm() }
	ev.BWRatio = ratio(comm(BandwidthSweep, 0.5), comm(BandwidthSweep, 2))
	ev.LatencyRatio = ratio(comm(LatencySweep, 0.5), comm(LatencySweep, 2))
	ev.JointRatio = ratio(comm(JointSweep, 0.5), comm(JointSweep, 2))
	return ev
}

// infinite stands for an infinite variation or ratio, so that evidence
// stays valid JSON.
const infinite = 1e9

// variation returns |x - base| / base.
func variation(x, base float64) float64 {
	d := math.Abs(x - base)
	switch {
	case d == 0:
		return 0
	case base == 0:
		return infinite
	}
	return math.Min(d/base, infinite)
}

// ratio returns a / b.
func ratio(a, b float64) float64 {
	switch {
	case a == b:
		return 1
	case b == 0:
		return infinite
	}
	return math.Min(a/b, infinite)
}
