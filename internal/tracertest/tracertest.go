// Package tracertest builds Kairos' PMPI tracer and runs MPI programs
// under it, for the tests of the packages that record real programs (the
// tracer's own, the OTF2 reader's, the CLI's corpus of real
// applications). A test skips with a message where an MPI, OTF2 or the
// program is not installed, and fails instead under
// KAIROS_REQUIRE_EXTERNAL=1 (testenv).
package tracertest

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"kairos/capture"
	"kairos/internal/testenv"
)

// MPI is an MPI implementation: its compiler wrappers, its launcher and
// how the launcher passes environment variables to the ranks.
type MPI struct {
	Name      string // "Open MPI", "MPICH"
	CC, FC    string // mpicc, mpif90
	Run       string // mpirun
	Package   string // the Debian package of the compilers
	RunPkg    string // the Debian package of the launcher
	oversub   []string
	envFlag   func(name, value string) []string
	extraEnvs []string
	quick     []string // the environment that spares the launcher work (quickPML)
}

// OpenMPI is Open MPI (Debian's default MPI), run as root with more ranks
// than cores.
var OpenMPI = MPI{Name: "Open MPI", CC: "mpicc", FC: "mpif90", Run: "mpirun", Package: "libopenmpi-dev", RunPkg: "openmpi-bin",
	oversub: []string{"--oversubscribe"},
	envFlag: func(name, value string) []string { return []string{"-x", name + "=" + value} },
	extraEnvs: []string{"OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1",
		"OMPI_MCA_rmaps_base_oversubscribe=1"},
	quick: quickPML()}

// MPICH is MPICH, installed beside Open MPI under its own names.
var MPICH = MPI{Name: "MPICH", CC: "mpicc.mpich", FC: "mpif90.mpich", Run: "mpirun.mpich", Package: "libmpich-dev", RunPkg: "mpich",
	envFlag: func(name, value string) []string { return []string{"-genv", name, value} }}

// Both are the MPIs the tracer is tested on.
var Both = []MPI{OpenMPI, MPICH}

// Need skips the test (or fails it under KAIROS_REQUIRE_EXTERNAL=1) if the
// MPI's compiler or launcher is not installed.
func (m MPI) Need(t testing.TB) {
	t.Helper()
	testenv.Tool(t, m.CC, m.Package)
	testenv.Tool(t, m.Run, m.RunPkg)
}

// NeedOTF2 skips the test (or fails it) without OTF2's headers.
func NeedOTF2(t testing.TB) {
	t.Helper()
	if _, err := os.Stat("/usr/include/otf2/otf2.h"); err != nil {
		if testenv.Required() {
			t.Fatal("KAIROS_REQUIRE_EXTERNAL=1 but OTF2's headers are not installed (Debian package libotf2-trace-dev)")
		}
		t.Skip("OTF2's headers are not installed (Debian package libotf2-trace-dev; skipping)")
	}
}

// Tracer returns the tracer built with the MPI's mpicc, warnings as
// errors, with OTF2 if otf2 is set (which needs libotf2-trace-dev). A
// build takes seconds of CPU and dozens of tests need one, so builds are
// kept, as Go keeps its own, in a cache named by what makes them (the
// source, the compiler, its flags and the MPI's underlying command line)
// under the user's cache directory. The library returned is a copy in
// dir, libkairos_trace.so, that programs can link with.
func (m MPI) Tracer(t testing.TB, dir string, otf2 bool) string {
	t.Helper()
	built := m.cachedTracer(t, dir, otf2)
	data, err := os.ReadFile(built)
	if err != nil {
		t.Fatal(err)
	}
	lib := filepath.Join(dir, "libkairos_trace.so")
	if err := os.WriteFile(lib, data, 0o755); err != nil {
		t.Fatal(err)
	}
	return lib
}

// cachedTracer returns the cache's build of the tracer, building it (its
// source written in dir) if there is none.
func (m MPI) cachedTracer(t testing.TB, dir string, otf2 bool) string {
	t.Helper()
	m.Need(t)
	flags, libs := []string{"-O2", "-Wall", "-Wextra", "-Werror", "-shared", "-fPIC"}, []string(nil)
	if otf2 {
		NeedOTF2(t)
		flags, libs = append(flags, "-DKAIROS_OTF2"), []string{"-lotf2"}
	}
	show, _ := exec.Command(m.CC, "-show").CombinedOutput() // Open MPI and MPICH both say what mpicc runs
	h := sha256.New()
	for _, part := range slices.Concat([]string{string(capture.Source), m.CC, string(show)}, flags, libs) {
		h.Write([]byte(part))
		h.Write([]byte{0})
	}
	lib := filepath.Join(cacheDir(t), fmt.Sprintf("libkairos_trace-%x.so", h.Sum(nil)[:12]))
	now := time.Now()
	if os.Chtimes(lib, now, now) == nil { // built already: marked as used
		return lib
	}
	src := filepath.Join(dir, capture.FileName)
	if err := os.WriteFile(src, capture.Source, 0o644); err != nil {
		t.Fatal(err)
	}
	// Built beside the cache entry, then renamed: packages testing at
	// once may build the same entry, and none sees half a library.
	tmp, err := os.CreateTemp(filepath.Dir(lib), "build-*.so")
	if err != nil {
		t.Fatal(err)
	}
	tmp.Close()
	defer os.Remove(tmp.Name())
	Command(t, dir, nil, m.CC, slices.Concat(flags, []string{"-o", tmp.Name(), src}, libs)...)
	if err := os.Rename(tmp.Name(), lib); err != nil {
		t.Fatal(err)
	}
	return lib
}

// cacheDir returns the directory of the tracers built for tests, from
// which the builds unused for a week are removed.
func cacheDir(t testing.TB) string {
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	dir := filepath.Join(base, "kairos", "tracertest")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	old, _ := filepath.Glob(filepath.Join(dir, "*.so"))
	for _, f := range old {
		if st, err := os.Stat(f); err == nil && time.Since(st.ModTime()) > 7*24*time.Hour {
			os.Remove(f)
		}
	}
	return dir
}

// Compile compiles the program src (a path; Fortran if it ends in .f90)
// into dir with the MPI's mpicc or mpif90 and returns the binary.
func (m MPI) Compile(t testing.TB, dir, src string, flags ...string) string {
	t.Helper()
	cc := m.CC
	if strings.HasSuffix(src, ".f90") {
		cc = testenv.Tool(t, m.FC, m.Package)
	}
	bin := filepath.Join(dir, strings.TrimSuffix(filepath.Base(src), filepath.Ext(src)))
	Command(t, dir, nil, cc, append([]string{"-O1", "-o", bin, src}, flags...)...)
	return bin
}

// Testdata returns the path of a file of capture/testdata.
func Testdata(name string) string {
	return filepath.Join(testenv.RepoRoot(), "capture", "testdata", name)
}

// Recording is how to run a program under the tracer.
type Recording struct {
	Lib    string   // the tracer; "" runs the program untraced
	Trace  string   // KAIROS_TRACE, the traces' directory
	Format string   // KAIROS_TRACE_FORMAT ("" for the tracer's default)
	NP     int      // ranks
	Env    []string // more NAME=VALUE variables for the ranks
	Dir    string   // the working directory
}

// Launch runs prog with args on r.NP ranks of the MPI and returns its
// output (standard output and error), failing the test if it fails. A
// program that refuses this machine's processor is skipped, even under
// KAIROS_REQUIRE_EXTERNAL=1: it is installed, and cannot run here
// (GROMACS built for rdtscp, on a virtual machine that does not
// advertise the instruction).
func (m MPI) Launch(t testing.TB, r Recording, prog string, args ...string) string {
	t.Helper()
	out, err := m.Try(r, prog, args...)
	if err != nil && strings.Contains(out, "not supported by the current hardware") {
		t.Skipf("%s cannot run on this machine's processor (skipping): %v\n%s", prog, err, out)
	}
	if err != nil {
		t.Fatalf("%s %s on %s: %v\n%s", prog, strings.Join(args, " "), m.Name, err, out)
	}
	return out
}

// Try is Launch returning the error.
func (m MPI) Try(r Recording, prog string, args ...string) (string, error) {
	full := append([]string{}, m.oversub...)
	full = append(full, "-np", strconv.Itoa(r.NP))
	vars := append([]string{"OMP_NUM_THREADS=1"}, r.Env...)
	if r.Lib != "" {
		vars = append(vars, "LD_PRELOAD="+r.Lib, "KAIROS_TRACE="+r.Trace, "KAIROS_TRACE_FORMAT="+r.Format)
	}
	for _, v := range vars {
		name, value, _ := strings.Cut(v, "=")
		full = append(full, m.envFlag(name, value)...)
	}
	full = append(full, prog)
	full = append(full, args...)
	return combined(func() *exec.Cmd {
		cmd := exec.Command(m.Run, full...)
		cmd.Dir = r.Dir
		cmd.Env = append(append(os.Environ(), m.extraEnvs...), m.quick...)
		return cmd
	})
}

// quickPML is Open MPI's point-to-point layer named, unless the
// environment names one: ob1, the one it selects here after probing UCX
// for devices a test machine does not have, which took 0.2 s of each
// launch (mpirun -np 4 of an empty program, 0.58 s against 0.37; the
// capture package's tests 59-62 s against 47 s, 72 against 62 s of CPU).
func quickPML() []string {
	if _, set := os.LookupEnv("OMPI_MCA_pml"); set {
		return nil
	}
	return []string{"OMPI_MCA_pml=ob1"}
}

// Command runs name with args in dir (with env added to the environment)
// and returns its output, failing the test if it fails.
func Command(t testing.TB, dir string, env []string, name string, args ...string) string {
	t.Helper()
	out, err := combined(func() *exec.Cmd {
		cmd := exec.Command(name, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), env...)
		if filepath.Base(name) == OpenMPI.Run {
			cmd.Env = append(cmd.Env, OpenMPI.quick...)
		}
		return cmd
	})
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// LostShutdownRace reports whether out, an mpirun's output, says only
// that Open MPI 4's mpirun lost the race between a rank's exit and the
// message that the rank finalized (open-mpi/ompi#7833, #9389): the rank
// finalized, and its PID, never recorded, reads 0. The program and its
// traces are whole, mpirun's exit status is not; a test runs it again,
// to fail on the program's errors and not the launcher's.
func LostShutdownRace(out []byte) bool {
	return bytes.Contains(out, []byte("with PID 0 on")) && bytes.Contains(out, []byte("exiting improperly"))
}

// combined runs the command cmd makes and returns its output (standard
// output and error), once more if mpirun lost the shutdown race.
func combined(cmd func() *exec.Cmd) (string, error) {
	out, err := cmd().CombinedOutput()
	if err != nil && LostShutdownRace(out) {
		first := out
		out, err = cmd().CombinedOutput()
		out = append([]byte("(mpirun lost Open MPI's shutdown race, ompi#7833; run again)\n"+string(first)+"(the run again)\n"), out...)
	}
	return string(out), err
}
