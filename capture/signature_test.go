package capture_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"kairos/capture"
	"kairos/cluster"
	"kairos/format"
	"kairos/internal/testenv"
	"kairos/internal/tracertest"
)

// TestTracerSignaturesMatchGo holds the tracer's in-situ ACURDION
// signatures to the Go cluster package's on random TI traces: loops
// nested four deep whose iteration counts vary from instance to
// instance, calls of every kind the signatures read, and bodies that
// break the tracer's prediction half-way. The tracer's source signs each
// rank's file as it signs the lines it writes (testdata/signacurdion.c);
// its loop signature (its C port of prsd's folding), averaged signatures
// and type bits must equal cluster.SignAll's exactly: 20 traces, 400
// under KAIROS_LONG=1.
func TestTracerSignaturesMatchGo(t *testing.T) {
	mpicc := testenv.Tool(t, "mpicc", "libopenmpi-dev")
	dir := t.TempDir()
	if d := os.Getenv("KAIROS_SIGDIR"); d != "" {
		dir = d
	}
	bin := compileWithTracer(t, dir, mpicc, "signacurdion")
	const ranks = 4
	traces := 20
	if testenv.Long() {
		traces = 400
	}
	for seed := range traces {
		tr := filepath.Join(dir, fmt.Sprintf("t%d", seed))
		if err := os.MkdirAll(tr, 0o755); err != nil {
			t.Fatal(err)
		}
		var index strings.Builder
		files := []string{strconv.Itoa(ranks)}
		for r := range ranks {
			rng := rand.New(rand.NewPCG(uint64(seed), uint64(r)))
			g := &tiGen{rng: rng, rank: r, ranks: ranks}
			g.line("init")
			g.block(0)
			g.line("finalize")
			name := fmt.Sprintf("rank-%d.ti", r)
			if err := os.WriteFile(filepath.Join(tr, name), []byte(g.b.String()), 0o644); err != nil {
				t.Fatal(err)
			}
			index.WriteString(name + "\n")
			files = append(files, filepath.Join(tr, name))
		}
		if err := os.WriteFile(filepath.Join(tr, "index.txt"), []byte(index.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		src, _, err := format.Open(filepath.Join(tr, "index.txt"))
		if err != nil {
			t.Fatal(err)
		}
		sigs, err := cluster.SignAll(src, cluster.SignOptions{})
		if err != nil {
			t.Fatal(err)
		}
		out := strings.Split(strings.TrimSpace(run(t, dir, nil, bin, files...)), "\n")
		for r, s := range sigs {
			want := fmt.Sprintf("%016x %.17g %.17g %.17g %.17g %.17g %.17g %.17g %016x", s.Loop, s.Count, s.Src, s.Dest,
				s.Key, s.Color, s.Tag, s.Comp, s.Types)
			if r >= len(out) || out[r] != want {
				got := "nothing"
				if r < len(out) {
					got = out[r]
				}
				t.Fatalf("trace %d rank %d (%s): in situ %s, cluster.Sign %s", seed, r, files[r+1], got, want)
			}
		}
	}
}

// tiGen writes a random rank's TI lines.
type tiGen struct {
	rng         *rand.Rand
	rank, ranks int
	b           strings.Builder
	pending     []string // the waits of the rank's outstanding requests
}

func (g *tiGen) line(f string, args ...any) {
	fmt.Fprintf(&g.b, "%d "+f+"\n", append([]any{g.rank}, args...)...)
}

// block writes a few items: calls, and loops (four deep at most) whose
// bodies are generated once and repeated, their inner loops' counts
// drawn again at each instance where they vary.
func (g *tiGen) block(depth int) {
	for range 1 + g.rng.IntN(4) {
		if depth < 4 && g.rng.IntN(3) == 0 {
			g.loop(depth)
			continue
		}
		g.call()
	}
}

func (g *tiGen) loop(depth int) {
	seed := g.rng.Uint64()
	count, vary := 1+g.rng.IntN(7-depth), g.rng.IntN(3) == 0
	for range count {
		// the same body each iteration (the same seed), its parameters
		// and inner counts drawn from it; a varying loop's last
		// iteration differs (a prediction that fails half-way)
		saved := g.rng
		s := seed
		if vary && g.rng.IntN(4) == 0 {
			s++
		}
		g.rng = rand.New(rand.NewPCG(s, uint64(depth)))
		g.block(depth + 1)
		g.rng = saved
	}
}

func (g *tiGen) call() {
	r := g.rng
	peer := r.IntN(g.ranks)
	switch r.IntN(14) {
	case 0:
		g.line("send %d %d %d", peer, r.IntN(5), 8<<r.IntN(8))
	case 1:
		g.line("recv %d %d %d", peer, r.IntN(5), 8<<r.IntN(8))
	case 2:
		tag := r.IntN(5)
		g.line("isend %d %d %d", peer, tag, 8<<r.IntN(8))
		g.pending = append(g.pending, fmt.Sprintf("wait %d %d %d", g.rank, peer, tag))
	case 3:
		tag := r.IntN(5)
		g.line("irecv %d %d %d", peer, tag, 8<<r.IntN(8))
		g.pending = append(g.pending, fmt.Sprintf("wait %d %d %d", peer, g.rank, tag))
	case 4:
		for _, w := range g.pending {
			g.line("%s", w)
		}
		g.pending = g.pending[:0]
	case 5:
		g.line("allreduce %d %d", 8<<r.IntN(4), r.IntN(100))
	case 6:
		g.line("barrier")
	case 7:
		g.line("bcast %d %d", 8<<r.IntN(6), peer)
	case 8:
		g.line("compute %d", r.IntN(1_000_000))
	case 9:
		g.line("compute %.6g", r.Float64()*1e6)
	case 10:
		g.line("sendRecv %d %d %d %d 6 6", 8<<r.IntN(4), peer, 8<<r.IntN(4), r.IntN(g.ranks))
	case 11:
		g.line("recv %d -444 %d", peer, 8<<r.IntN(4))
	case 12:
		g.line("comm_split")
	case 13:
		g.line("comm_dup")
	}
}

// TestTracerClusteringMatchesGo holds the tracer's in-situ ACURDION
// clustering (Algorithm 1's reductions, Algorithm 2's tree of K-farthest
// lists, acurdion2's shares and split, over MPI) to cluster.Cluster on
// random signatures of 7 ranks (one mpirun, testdata/clusteracurdion.c):
// few distinct values per signature, so that distances tie and vanish,
// K from 1 to 9, both methods; the clusters and the format must be equal.
// KAIROS_LONG=1 runs 200 cases on 7, 13 and 32 ranks.
func TestTracerClusteringMatchesGo(t *testing.T) {
	mpicc := testenv.Tool(t, "mpicc", "libopenmpi-dev")
	testenv.Tool(t, "mpirun", "openmpi-bin")
	dir := t.TempDir()
	bin := compileWithTracer(t, dir, mpicc, "clusteracurdion")
	cases, sizes := 30, []int{7}
	if testenv.Long() {
		cases, sizes = 200, []int{7, 13, 32}
	}
	for _, np := range sizes {
		rng := rand.New(rand.NewPCG(uint64(np), 41))
		var in strings.Builder
		var want []string
		for c := range cases {
			m, k := cluster.Acurdion, 1+rng.IntN(9)
			if c%2 == 1 {
				m = cluster.Acurdion2
			}
			sigs := randomSignatures(rng, np)
			fmt.Fprintf(&in, "case %s %d\n", m, k)
			for _, s := range sigs {
				p := s.Params
				fmt.Fprintf(&in, "%d %d %d %.17g %.17g %.17g %.17g %.17g %.17g %.17g %.17g %d %d %d %d %d %d %d\n",
					s.Path, s.Loop, s.Types, s.Count, s.Src, s.Dest, s.Key, s.Color, s.Tag, s.Comp, s.Comm,
					p.CountSum, p.CountN, p.DestSum, p.DestN, p.SrcSum, p.SrcN, p.Types)
			}
			opt := cluster.DefaultOptions()
			opt.Method, opt.K = m, k
			res, err := cluster.Cluster(sigs, opt)
			if err != nil {
				t.Fatal(err)
			}
			line := fmt.Sprintf("case %d:", c)
			for _, g := range res.Groups {
				line += fmt.Sprintf(" %d %v", g.Rep, g.Members)
			}
			bits := 0
			for _, f := range res.Format {
				bits |= 1 << slices.Index(cluster.SignatureNames, f)
			}
			want = append(want, fmt.Sprintf("%s format %d", line, bits))
		}
		file := filepath.Join(dir, fmt.Sprintf("cases-%d.txt", np))
		if err := os.WriteFile(file, []byte(in.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		env := []string{"OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1"}
		out := run(t, dir, env, "mpirun", "--oversubscribe", "-np", strconv.Itoa(np), bin, file)
		var got []string
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(l, "case ") {
				got = append(got, strings.TrimSpace(l))
			}
		}
		for c := range want {
			if c >= len(got) || got[c] != want[c] {
				g := "nothing"
				if c < len(got) {
					g = got[c]
				}
				t.Fatalf("%d ranks, case %d (%s):\nin situ:        %s\ncluster.Cluster: %s", np, c, file, g, want[c])
			}
		}
	}
}

// randomSignatures draws n ranks' signatures from a few values each.
func randomSignatures(rng *rand.Rand, n int) []cluster.Signatures {
	pick := func(k int) int { return rng.IntN(1 + rng.IntN(k)) }
	vals := func() []float64 {
		v := make([]float64, 1+rng.IntN(4))
		for i := range v {
			v[i] = math.Round(rng.Float64()*1e4) / 8
		}
		return v
	}
	palette := make([][]float64, 8)
	for i := range palette {
		palette[i] = vals()
	}
	sigs := make([]cluster.Signatures, n)
	for r := range sigs {
		s := &sigs[r]
		s.Rank, s.Reference = int32(r), -1
		s.Path, s.Loop, s.Types = int32(pick(4)), uint64(pick(3)), uint64(1)<<(48+pick(3))
		f := []*float64{&s.Count, &s.Src, &s.Dest, &s.Key, &s.Color, &s.Tag, &s.Comp, &s.Comm}
		for i, p := range f {
			*p = palette[i][rng.IntN(len(palette[i]))]
		}
		s.Params = cluster.ParamKey{CountSum: int64(pick(3)), CountN: 1, DestSum: int64(pick(2)), DestN: 1, Types: s.Types}
	}
	return sigs
}

// compileWithTracer compiles testdata/name.c, a program that includes the
// tracer's source (capture.Source, written into dir) to call its static
// functions, into dir/name; -O0, so that it compiles in a second.
func compileWithTracer(t *testing.T, dir, mpicc, name string) string {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, capture.FileName), capture.Source, 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, name)
	run(t, dir, nil, mpicc, "-O0", "-I", dir, "-o", bin, tracertest.Testdata(name+".c"), "-lm")
	return bin
}
