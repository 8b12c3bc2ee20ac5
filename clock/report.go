package clock

import (
	"encoding/csv"
	"fmt"
	"io"
	"slices"
	"strconv"
	"text/tabwriter"
)

// WriteText writes the classification for people: per interconnect, the
// class, the evidence and the rules that decided it, and with curves the
// 21 predictions of Table III; then a row like the paper's Table IV.
func (cl *Classification) WriteText(w io.Writer, name string, curves bool) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "%s: %d ranks, %d events, %d configurations in one replay\n", name, cl.Ranks, cl.Events, cl.Configs)
	for _, v := range cl.Verdicts {
		ic, ev := v.Interconnect, v.Evidence
		fmt.Fprintf(tw, "\n%s %v: %s (%s)\n", ic.Label, ic.Config, v.Class, v.Description)
		ioShare := ""
		if ev.IOShare > 0 {
			ioShare = "; MPI-IO " + pct(ev.IOShare)
		}
		fmt.Fprintf(tw, "  predicted time %s s; computation %s, wait %s, latency %s, bandwidth %s; communication %s%s\n",
			seconds(ev.Time), pct(ev.CompShare), pct(ev.WaitShare), pct(ev.LatencyShare), pct(ev.BandwidthShare), pct(ev.CommShare), ioShare)
		for _, r := range v.Rules {
			yes := "no"
			if r.Holds {
				yes = "yes"
			}
			fmt.Fprintf(tw, "  %s %s\t%s\t%s\n", r.Rule, r.Name, yes, r.Why)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		if curves {
			if err := writeCurves(w, v.Predictions); err != nil {
				return err
			}
		}
	}
	fmt.Fprintln(w)
	if len(cl.Extra) > 0 {
		fmt.Fprintln(w, "Other configurations:")
		if err := writePredictions(w, cl.Extra); err != nil {
			return err
		}
		fmt.Fprintln(w)
	}
	return WriteTableIV(w, []string{name}, []*Classification{cl})
}

// writeCurves writes an interconnect's 21 predictions as a table.
func writeCurves(w io.Writer, preds []Prediction) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	withIO := hasIO(preds)
	fmt.Fprintf(tw, "  set\tscale\t%s", predictionHead(withIO))
	for _, p := range preds {
		fmt.Fprintf(tw, "  %s\t%s\t%s", p.Sweep, p.ScaleLabel(), predictionRow(p, withIO))
	}
	return tw.Flush()
}

// hasIO reports whether any prediction has MPI-IO time, which the tables
// then show in a column of their own.
func hasIO(ps []Prediction) bool {
	return slices.ContainsFunc(ps, func(p Prediction) bool { return p.IO > 0 })
}

// predictionHead and predictionRow are a prediction's columns of a table,
// MPI-IO time among them if io.
func predictionHead(io bool) string {
	h := "BW Gbit/s\tL us\ttime s\tcomputation s\twait s\tlatency s\tbandwidth s\t"
	if io {
		h += "I/O s\t"
	}
	return h + "\n"
}

func predictionRow(p Prediction, io bool) string {
	r := fmt.Sprintf("%s\t%s\t%s\t%s\t%s\t%s\t%s\t", num(p.BW), num(p.Lat), seconds(p.Time), seconds(p.Comp),
		seconds(p.Wait), seconds(p.Latency), seconds(p.Bandwidth))
	if io {
		r += seconds(p.IO) + "\t"
	}
	return r + "\n"
}

// WriteTableIV writes one row per trace and one column per interconnect,
// as the paper's Table IV. The classifications must share interconnects.
func WriteTableIV(w io.Writer, names []string, cls []*Classification) error {
	if len(cls) == 0 {
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprint(tw, "trace")
	for _, v := range cls[0].Verdicts {
		fmt.Fprintf(tw, "\t%s", v.Interconnect.Label)
	}
	fmt.Fprintln(tw)
	for i, cl := range cls {
		fmt.Fprint(tw, names[i])
		for _, v := range cl.Verdicts {
			fmt.Fprintf(tw, "\t%s", v.Class)
		}
		fmt.Fprintln(tw)
	}
	return tw.Flush()
}

// csvHeader names the columns of WriteCSV and WritePredictionsCSV.
var csvHeader = []string{"interconnect", "set", "scale", "bw_gbps", "latency_us", "time_s", "computation_s", "wait_s", "latency_s", "bandwidth_s", "communication_s"}

// WriteCSV writes the sensitivity curves, one line per configuration of
// each interconnect's Table III sets: the data of the paper's Figures 4-7;
// then the other configurations, with interconnect, set and scale empty.
func (cl *Classification) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	cw.Write(csvHeader)
	for _, v := range cl.Verdicts {
		for _, p := range v.Predictions {
			cw.Write(predictionRecord(v.Interconnect.Name, p.Sweep.String(), p.ScaleLabel(), p))
		}
	}
	for _, p := range cl.Extra {
		cw.Write(predictionRecord("", "", "", p))
	}
	cw.Flush()
	return cw.Error()
}

// Predictions returns r's predictions, one per configuration, outside of
// any sweep.
func (r *Result) Predictions() []Prediction {
	ps := make([]Prediction, len(r.Configs))
	for i, c := range r.Configs {
		ps[i] = r.prediction(Point{Config: c}, i)
	}
	return ps
}

// WritePredictionsCSV writes one line per configuration of r, in the
// columns of WriteCSV (interconnect, set and scale empty).
func (r *Result) WritePredictionsCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	cw.Write(csvHeader)
	for _, p := range r.Predictions() {
		cw.Write(predictionRecord("", "", "", p))
	}
	cw.Flush()
	return cw.Error()
}

// WriteText writes r's predictions as a table.
func (r *Result) WriteText(w io.Writer, name string) error {
	fmt.Fprintf(w, "%s: %d ranks, %d events, %d configurations in one replay\n", name, r.Ranks, r.Events, len(r.Configs))
	return writePredictions(w, r.Predictions())
}

// writePredictions writes predictions outside of sweeps as a table.
func writePredictions(w io.Writer, ps []Prediction) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	withIO := hasIO(ps)
	fmt.Fprint(tw, predictionHead(withIO))
	for _, p := range ps {
		fmt.Fprint(tw, predictionRow(p, withIO))
	}
	return tw.Flush()
}

func predictionRecord(ic, set, scale string, p Prediction) []string {
	f := func(x float64) string { return strconv.FormatFloat(x, 'g', 10, 64) }
	return []string{ic, set, scale, f(p.BW), f(p.Lat), f(p.Time), f(p.Comp), f(p.Wait), f(p.Latency), f(p.Bandwidth), f(p.Comm())}
}

func pct(x float64) string     { return strconv.FormatFloat(100*x, 'f', 1, 64) + "%" }
func seconds(x float64) string { return strconv.FormatFloat(x, 'f', 6, 64) }
func num(x float64) string     { return strconv.FormatFloat(x, 'g', 6, 64) }
