// Package testenv gives tests access to what lives outside the repository:
// the shared reference material (traces, SimGrid's tests, the papers) kept
// beside the checkout in ../shared, and external reference tools such as
// SimGrid's smpirun. Where either is absent a test skips with a message
// saying what is missing, unless KAIROS_REQUIRE_EXTERNAL=1 (set by CI),
// where it fails instead.
package testenv

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// Required reports whether external material and tools are mandatory.
func Required() bool { return os.Getenv("KAIROS_REQUIRE_EXTERNAL") == "1" }

// Long reports whether the long differential sweeps run in full:
// KAIROS_LONG=1 (or its older name KAIROS_SIM_FULL=1), which .ci/run sets
// for a second pass over the packages that have them. Without it, `go test
// ./...` runs every test with the same assertions on fewer cases, so that
// the whole suite takes minutes on two cores.
func Long() bool {
	return os.Getenv("KAIROS_LONG") == "1" || os.Getenv("KAIROS_SIM_FULL") == "1"
}

func missing(t testing.TB, format string, args ...any) {
	t.Helper()
	if Required() {
		t.Fatalf("KAIROS_REQUIRE_EXTERNAL=1 but "+format, args...)
	}
	t.Skipf(format+" (skipping)", args...)
}

// RepoRoot returns the repository's top directory.
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// Shared returns the path of rel inside the shared reference folder
// (../shared from the repository, or $KAIROS_SHARED), skipping the test if
// it is not there.
func Shared(t testing.TB, rel string) string {
	t.Helper()
	dir := os.Getenv("KAIROS_SHARED")
	if dir == "" {
		dir = filepath.Join(RepoRoot(), "..", "shared")
	}
	p := filepath.Join(dir, rel)
	if _, err := os.Stat(p); err != nil {
		missing(t, "reference material %s is not available: %v", p, err)
	}
	return p
}

// Tool returns the path of an external program, skipping the test if it
// is not installed.
func Tool(t testing.TB, name, debianPackage string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		missing(t, "%s is not installed (Debian package %s)", name, debianPackage)
	}
	return p
}

// DebianPython is the Python of Debian's packages, whose python3-*
// modules (mpi4py, petsc4py) a python3 earlier in PATH (pyenv, a
// virtualenv) does not have.
const DebianPython = "/usr/bin/python3"

// PythonModule returns DebianPython, skipping the test unless it runs
// script (an import of the module) without error.
func PythonModule(t testing.TB, script, debianPackage string) string {
	t.Helper()
	if out, err := exec.Command(DebianPython, "-c", script).CombinedOutput(); err != nil {
		missing(t, "%s -c %q: %v (Debian package %s)\n%s", DebianPython, script, err, debianPackage, out)
	}
	return DebianPython
}

// Figure1Ring is seed 003's Figure 1 (Casanova et al.): four ranks compute
// 1e6 flops and pass 1e6 bytes around a ring, in SimGrid 3.32's TI syntax,
// which adds a tag (0) to send and recv. Several packages test against it.
const Figure1Ring = `0 compute 1e6
0 send 1 0 1e6
0 recv 3 0 1e6
1 recv 0 0 1e6
1 compute 1e6
1 send 2 0 1e6
2 recv 1 0 1e6
2 compute 1e6
2 send 3 0 1e6
3 recv 2 0 1e6
3 compute 1e6
3 send 0 0 1e6
`

// HugeNumber reports whether text has a number above 10^7: bytes that a
// pipelined collective cuts into thousands of segments, which fuzz
// targets of the simulator skip (legal, but slow to replay).
func HugeNumber(text string) bool {
	for _, tok := range strings.Fields(text) {
		if v, err := strconv.ParseFloat(tok, 64); err == nil && math.Abs(v) > 1e7 {
			return true
		}
	}
	return false
}

// WriteFile writes content to a file called name in a fresh temporary
// directory of the test and returns its path.
func WriteFile(t testing.TB, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// WriteFiles writes files (name to content) into one new temporary
// directory, for inputs that name one another (a platform and its
// profiles), and returns the directory.
func WriteFiles(t testing.TB, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// Cluster writes into dir SimGrid's crossbar cluster of n hosts node-0 to
// node-(n-1) (1 Gf, private 125 MBps and 50 us links), as platform.xml,
// and a hostfile naming each once, and returns their paths: the platform
// of the paper's examples and of differential tests against SimGrid.
func Cluster(t testing.TB, dir string, n int) (platform, hostfile string) {
	t.Helper()
	platform = filepath.Join(dir, "platform.xml")
	hostfile = filepath.Join(dir, "hostfile")
	xml := fmt.Sprintf(`<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <cluster id="c" prefix="node-" suffix="" radical="0-%d" speed="1Gf" bw="125MBps" lat="50us"/>
</platform>
`, n-1)
	var hosts strings.Builder
	for i := range n {
		fmt.Fprintf(&hosts, "node-%d\n", i)
	}
	if err := os.WriteFile(platform, []byte(xml), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(hostfile, []byte(hosts.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return platform, hostfile
}

// SimGridProgram compiles the C++ program at src against the installed
// SimGrid (libsimgrid-dev, found with pkg-config) and returns the
// binary's path, cached by the hash of the source and flags so that
// repeated runs are fast. The test skips, or fails under
// KAIROS_REQUIRE_EXTERNAL=1, without SimGrid or g++.
func SimGridProgram(t testing.TB, src string) string {
	t.Helper()
	Tool(t, "smpirun", "libsimgrid-dev")
	gxx := Tool(t, "g++", "g++")
	code, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	pkgConfig := Tool(t, "pkg-config", "pkg-config")
	flags, err := exec.Command(pkgConfig, "--cflags", "--libs", "simgrid").Output()
	if err != nil {
		t.Fatalf("pkg-config simgrid: %v", err)
	}
	sum := sha256.Sum256(append(code, flags...))
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	dir := filepath.Join(cache, "kairos-test")
	name := strings.TrimSuffix(filepath.Base(src), filepath.Ext(src))
	bin := filepath.Join(dir, name+"-"+hex.EncodeToString(sum[:8]))
	if _, err := os.Stat(bin); err == nil {
		return bin
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	tmp := bin + ".tmp" + strconv.Itoa(os.Getpid())
	args := append([]string{"-O1", "-o", tmp, src}, strings.Fields(string(flags))...)
	if out, err := exec.Command(gxx, args...).CombinedOutput(); err != nil {
		t.Fatalf("compiling %s: %v\n%s", src, err, out)
	}
	if err := os.Rename(tmp, bin); err != nil {
		t.Fatal(err)
	}
	return bin
}
