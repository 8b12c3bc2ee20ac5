package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"kairos/clock"
	"kairos/internal/fileio"
)

func init() { addVerb("predict", newPredictCmd) }

// configFlags are the flags that name configurations outside of the
// interconnects' sweeps, shared by predict and classify.
type configFlags struct {
	bws, lats []float64
	pairs     []string
	file      string
}

func (c *configFlags) register(f *pflag.FlagSet) {
	f.Float64SliceVar(&c.bws, "bw", nil, "bandwidths in Gbit/s (each is combined with every --lat)")
	f.Float64SliceVar(&c.lats, "lat", nil, "latencies in microseconds")
	f.StringArrayVar(&c.pairs, "config", nil, "a configuration BW,L (Gbit/s, us); repeatable")
	f.StringVar(&c.file, "configs", "", "read configurations from this file, one \"BW,L\" a line")
}

// configs returns the configurations the flags name: every --bw with
// every --lat, the --config pairs, the lines of --configs; it warns on w
// of figures that look given in other units (unitWarnings).
func (c *configFlags) configs(w io.Writer) ([]clock.Config, error) {
	if len(c.bws) > 0 != (len(c.lats) > 0) {
		return nil, usagef("--bw and --lat go together")
	}
	var cs []clock.Config
	for _, bw := range c.bws {
		for _, lat := range c.lats {
			cfg := clock.Config{BW: bw, Lat: lat}
			if !cfg.Valid() {
				return nil, usagef("configuration %v: bandwidth must be positive, latency not negative", cfg)
			}
			cs = append(cs, cfg)
		}
	}
	for _, p := range c.pairs {
		cfg, err := clock.ParseConfig(p)
		if err != nil {
			return nil, usagef("--config: %v", err)
		}
		cs = append(cs, cfg)
	}
	if c.file != "" {
		f, err := fileio.Open(c.file)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		more, err := clock.ParseConfigs(f, c.file)
		if err != nil {
			return nil, err
		}
		cs = append(cs, more...)
	}
	unitWarnings(w, cs)
	return cs, nil
}

// unitWarnings says, once a figure, where a configuration's bandwidth or
// latency looks given in bit/s or seconds: above 100,000 Gbit/s (100
// Tbit/s), below 0.01 us (10 ns), no network's. The figures are kept as
// given.
func unitWarnings(w io.Writer, cs []clock.Config) {
	type figure struct {
		lat bool
		v   float64
	}
	seen := map[figure]bool{}
	say := func(f figure, format string, a ...any) {
		if !seen[f] {
			seen[f] = true
			fmt.Fprintf(w, "warning: "+format+"\n", a...)
		}
	}
	for _, c := range cs {
		if c.BW > 1e5 {
			say(figure{false, c.BW}, "bandwidth %g Gbit/s is more than any network's: bandwidths are in Gbit/s (%g bit/s is %g)", c.BW, c.BW, c.BW/1e9)
		}
		if c.Lat > 0 && c.Lat < 1e-2 {
			say(figure{true, c.Lat}, "latency %g us is less than any network's: latencies are in microseconds (%g s is %g)", c.Lat, c.Lat, c.Lat*1e6)
		}
	}
}

func newPredictCmd() *cobra.Command {
	var (
		model         modelFlags
		configs       configFlags
		asJSON, asCSV bool
		out           string
	)
	cmd := &cobra.Command{
		Use:   "predict [flags] TRACE",
		Short: "Predict a trace's run time on given network configurations, in one replay",
		Long: `Predict replays a trace once with a logical clock per rank for every network
configuration given, and prints for each the predicted execution time (the
latest rank's end) and the four counters of Tong et al. summed over ranks:
computation, wait, latency and bandwidth time (communication overlapped by
computation is not counted).

Configurations are (BW, L) pairs, bandwidth in Gbit/s and latency in
microseconds: every combination of the --bw and --lat lists, every --config
pair, and every line "BW,L" of --configs FILE. The model flags are those of
"kairos classify".`,
		Example: `  kairos predict --speed 1Gf --bw 1,10,32 --lat 1.3,5,50 run.ktr
  kairos predict --config 100,0.6 --config 400,0.5 --csv timed.otf2
  kairos predict --configs machines.txt --protocol rendezvous --json run.ti`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opt, err := model.options()
			if err != nil {
				return err
			}
			if asJSON && asCSV {
				return usagef("--json and --csv cannot be combined")
			}
			if opt.Configs, err = configs.configs(cmd.ErrOrStderr()); err != nil {
				return err
			}
			if len(opt.Configs) == 0 {
				return usagef("no configuration: give --bw and --lat, --config or --configs")
			}
			src, err := openReplay(args[0])
			if err != nil {
				return err
			}
			res, err := clock.Replay(src, opt)
			if err != nil {
				return replayErr(args[0], err)
			}
			warnUnmatched(cmd.ErrOrStderr(), args[0], res.Unmatched)
			return writeOutput(cmd, out, func(w io.Writer) error {
				switch {
				case asJSON:
					return writeJSON(w, struct {
						Trace       string             `json:"trace"`
						Ranks       int                `json:"ranks"`
						Events      int64              `json:"events"`
						Predictions []clock.Prediction `json:"predictions"`
					}{args[0], res.Ranks, res.Events, res.Predictions()})
				case asCSV:
					return res.WritePredictionsCSV(w)
				}
				return res.WriteText(w, args[0])
			})
		},
	}
	f := cmd.Flags()
	model.register(f)
	configs.register(f)
	f.BoolVar(&asJSON, "json", false, "print the predictions as JSON")
	f.BoolVar(&asCSV, "csv", false, "print the predictions as CSV")
	f.StringVarP(&out, "output", "o", "-", "write to this file instead of standard output")
	return cmd
}
