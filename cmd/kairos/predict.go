package main

import (
	"io"

	"github.com/spf13/cobra"

	"kairos/clock"
	"kairos/internal/fileio"
)

func init() { verbs = append(verbs, newPredictCmd) }

func newPredictCmd() *cobra.Command {
	var (
		model      modelFlags
		bws, lats  []float64
		pairs      []string
		configFile string
		asJSON     bool
		asCSV      bool
		out        string
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
			if len(bws) > 0 != (len(lats) > 0) {
				return usagef("--bw and --lat go together")
			}
			for _, bw := range bws {
				for _, lat := range lats {
					c := clock.Config{BW: bw, Lat: lat}
					if !c.Valid() {
						return usagef("configuration %v: bandwidth must be positive, latency not negative", c)
					}
					opt.Configs = append(opt.Configs, c)
				}
			}
			for _, p := range pairs {
				c, err := clock.ParseConfig(p)
				if err != nil {
					return usagef("--config: %v", err)
				}
				opt.Configs = append(opt.Configs, c)
			}
			if configFile != "" {
				f, err := fileio.Open(configFile)
				if err != nil {
					return err
				}
				cs, err := clock.ParseConfigs(f, configFile)
				f.Close()
				if err != nil {
					return err
				}
				opt.Configs = append(opt.Configs, cs...)
			}
			if len(opt.Configs) == 0 {
				return usagef("no configuration: give --bw and --lat, --config or --configs")
			}
			src, err := openTrace(args[0])
			if err != nil {
				return err
			}
			res, err := clock.Replay(src, opt)
			if err != nil {
				return replayErr(args[0], err)
			}
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
	f.Float64SliceVar(&bws, "bw", nil, "bandwidths in Gbit/s (each is combined with every --lat)")
	f.Float64SliceVar(&lats, "lat", nil, "latencies in microseconds")
	f.StringArrayVar(&pairs, "config", nil, "a configuration BW,L (Gbit/s, us); repeatable")
	f.StringVar(&configFile, "configs", "", "read configurations from this file, one \"BW,L\" a line")
	f.BoolVar(&asJSON, "json", false, "print the predictions as JSON")
	f.BoolVar(&asCSV, "csv", false, "print the predictions as CSV")
	f.StringVarP(&out, "output", "o", "-", "write to this file instead of standard output")
	return cmd
}
