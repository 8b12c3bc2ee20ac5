package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"kairos/internal/testenv"
)

// copyDumpi copies a shared DUMPI sample into a temporary directory (at
// test time; the samples are never copied into the repository).
func copyDumpi(t *testing.T, name string) string {
	t.Helper()
	src := testenv.Shared(t, "traces/dumpi/"+name)
	dir := t.TempDir()
	files, _ := filepath.Glob(filepath.Join(src, "*"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(f)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestDumpiStatsAndCheck runs stats and check on DUMPI samples given as a
// directory, as a .meta file and as the .bin of a one-rank run.
func TestDumpiStatsAndCheck(t *testing.T) {
	dir := testenv.Shared(t, "traces/dumpi/sst-macro-testbgp")
	single := filepath.Join(testenv.Shared(t, "traces/dumpi/sst-macro-unit-test"), "test-0000.bin")
	for _, in := range []string{dir, filepath.Join(dir, "testbgp.meta"), single} {
		var out, errb bytes.Buffer
		if code := run([]string{"check", in}, &out, &errb); code != 0 || out.Len() != 0 {
			t.Errorf("check %s: exit %d\n%s%s", in, code, out.String(), errb.String())
		}
	}
	var out, errb bytes.Buffer
	if code := run([]string{"stats", dir}, &out, &errb); code != 0 {
		t.Fatalf("stats: exit %d: %s", code, errb.String())
	}
	for _, want := range []string{"ranks             7", "events            1589", "p2p messages      588", "p2p bytes         418656", "comm_create    7"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("stats output lacks %q:\n%s", want, out.String())
		}
	}
	out.Reset()
	if code := run([]string{"check", "--json", "--protocol", "rendezvous", testenv.Shared(t, "traces/dumpi/tauferlab-naive-alltoall-4")}, &out, &errb); code != 0 ||
		!strings.Contains(out.String(), `"messages": 48`) || !strings.Contains(out.String(), `"requests": 96`) {
		t.Errorf("check --json: exit %d\n%s", code, out.String())
	}
}

// TestDumpiCheckFindsDefect changes one Isend's tag in a copy of the ring
// sample: check must name the file and byte offset of both unmatched
// calls, and note the receives sst-dumpi does not record (MPI_Mrecv...),
// which read so too.
func TestDumpiCheckFindsDefect(t *testing.T) {
	dir := copyDumpi(t, "sst-macro-testtrace")
	p := filepath.Join(dir, "testtrace-0000.bin")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(b, []byte{0, 0, 5, 0x39}) // rank 0's Isend, tag 1337
	if i < 0 {
		t.Fatal("tag 1337 not found")
	}
	b[i+3]++
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	code := run([]string{"check", dir}, &out, &errb)
	if code != 1 ||
		!strings.Contains(out.String(), "testtrace-0000.bin:159: rank 0 event 4: send to 1 (tag 1338") ||
		!strings.Contains(out.String(), "testtrace-0001.bin:208: rank 1 event 5: receive from 0 (tag 1337") ||
		!strings.Contains(errb.String(), "sst-dumpi records no MPI_Mprobe, MPI_Improbe, MPI_Mrecv nor MPI_Imrecv") {
		t.Errorf("exit %d\n%s%s", code, out.String(), errb.String())
	}
}

// TestDumpiTruncated: a truncated rank file is a located error, exit 1.
func TestDumpiTruncated(t *testing.T) {
	dir := copyDumpi(t, "tauferlab-naive-alltoall-4")
	p := filepath.Join(dir, "dumpi-2019.05.22.11.54.43-0002.bin")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b[:3000], 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	code := run([]string{"stats", dir}, &out, &errb)
	if code != 1 || !strings.Contains(errb.String(), p+": byte 2936: index has no magic number") {
		t.Errorf("exit %d\n%s%s", code, out.String(), errb.String())
	}
}
