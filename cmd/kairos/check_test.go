package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"kairos/check"
	"kairos/format"
	"kairos/trace"
)

// csRun runs kairos with args and returns its exit code and outputs.
func csRun(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := run(args, &out, &errb)
	return code, out.String(), errb.String()
}

// csEvent builds an event of kind k with f applied.
func csEvent(k trace.Kind, f func(*trace.Event)) trace.Event {
	e := trace.NewEvent(k)
	if f != nil {
		f(&e)
	}
	return e
}

func csSend(dst int32, n int64) trace.Event {
	return csEvent(trace.Send, func(e *trace.Event) { e.Partner, e.SendBytes = dst, n })
}

func csRecv(src int32, n int64) trace.Event {
	return csEvent(trace.Recv, func(e *trace.Event) { e.Partner, e.RecvBytes = src, n })
}

// csWrite writes ranks as a trace in format name to a temporary file.
func csWrite(t *testing.T, name, file string, ranks ...[]trace.Event) string {
	t.Helper()
	tr := trace.New(len(ranks), trace.NewMeta())
	for r, evs := range ranks {
		for i := range evs {
			tr.Ranks[r].Append(&evs[i])
		}
	}
	f, ok := format.ByName(name)
	if !ok || f.Write == nil {
		t.Skipf("format %s cannot be written yet", name)
	}
	path := filepath.Join(t.TempDir(), file)
	if err := f.Write(path, tr); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestCheckCLI(t *testing.T) {
	headToHead := []([]trace.Event){
		{csSend(1, 1<<20), csRecv(1, 1<<20)},
		{csSend(0, 1<<20), csRecv(0, 1<<20)},
	}
	deadlocked := csWrite(t, "ktr", "h2h.ktr", headToHead...)
	valid := csWrite(t, "ktr", "ok.ktr", []trace.Event{csSend(1, 8)}, []trace.Event{csRecv(0, 8)})
	leak := csWrite(t, "ktr", "leak.ktr", []trace.Event{csEvent(trace.Isend, func(e *trace.Event) { e.Partner, e.SendBytes, e.Request = 1, 8, 3 })}, []trace.Event{csRecv(0, 8)})
	truncated := csWrite(t, "ktr", "trunc.ktr", []trace.Event{csSend(1, 80)}, []trace.Event{csRecv(0, 8)})
	cases := []struct {
		name     string
		args     []string
		code     int
		out, err string // exact stdout; substring of stderr
	}{
		{"valid", []string{"check", valid}, 0, "", ""},
		{"eager passes", []string{"check", "--protocol", "eager", deadlocked}, 0, "", ""},
		{"simgrid deadlock", []string{"check", deadlocked}, 1,
			deadlocked + ": rank 0 event 0: deadlock under simgrid: send waits for rank 1 to receive its 1048576-byte message (tag 0)\n" +
				deadlocked + ": rank 1 event 0: deadlock under simgrid: send waits for rank 0 to receive its 1048576-byte message (tag 0)\n", ""},
		{"simgrid large limit", []string{"check", "--eager-limit", "2000000", deadlocked}, 0, "", ""},
		{"truncation", []string{"check", "--protocol", "none", truncated}, 1,
			truncated + ": rank 1 event 0: receive of 8 bytes truncates the 80-byte message from rank 0 (tag 0, its event 0)\n", ""},
		{"warnings only", []string{"check", leak}, 0, leak + ": rank 0 event 0: warning: request 3 (isend to 1 tag 0) is never completed by a wait\n", ""},
		{"bad protocol", []string{"check", "--protocol", "fast", valid}, 2, "", "unknown protocol"},
		{"two traces", []string{"check", valid, valid}, 2, "", "takes 1 argument"},
		{"missing file", []string{"check", filepath.Join(t.TempDir(), "none.ktr")}, 1, "", "none.ktr"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out, errs := csRun(c.args...)
			if code != c.code || out != c.out || !strings.Contains(errs, c.err) || c.err == "" && errs != "" {
				t.Errorf("exit %d, stdout:\n%s\nstderr:\n%s\nwant exit %d, stdout:\n%s\nstderr containing %q", code, out, errs, c.code, c.out, c.err)
			}
		})
	}
}

func TestCheckCLIJSON(t *testing.T) {
	path := csWrite(t, "ktr", "h2h.ktr",
		[]trace.Event{csSend(1, 1<<20), csRecv(1, 1<<20)},
		[]trace.Event{csSend(0, 1<<20), csRecv(0, 1<<20)})
	code, out, _ := csRun("check", "--json", "--protocol", "rendezvous", path)
	var rep check.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if code != 1 || !rep.Deadlock || rep.Errors != 2 || rep.Protocol != "rendezvous" || rep.Events != 4 || len(rep.Problems) != 2 {
		t.Errorf("exit %d, report %+v", code, rep)
	}
}

// TestCheckCLIPositions checks that problems in a text trace name their
// file and line.
func TestCheckCLIPositions(t *testing.T) {
	if _, ok := format.ByName("ti"); !ok {
		t.Skip("the ti format is not registered yet")
	}
	dir := t.TempDir()
	for i, c := range []struct{ text, want string }{
		{"0 init\n1 init\n0 send 1 0 100\n1 compute 10\n1 recv 0 0 10\n0 finalize\n1 finalize\n",
			"F:5: rank 1 event 2: receive of 10 bytes truncates the 100-byte message from rank 0 (tag 0, its event 1)\n"},
		{"0 init\n0 recv 1 0 8\n0 finalize\n1 init\n1 barrier\n1 finalize\n",
			"F:2: rank 0 event 1: receive from 1 (tag 0, communicator 0) is never matched by a send\n" +
				"F:2: rank 0 event 1: deadlock under simgrid: recv waits for a message from 1 (tag 0)\n" +
				"F:5: rank 1 event 1: barrier (collective #0 on communicator 0) is never entered by rank 0\n" +
				"F:5: rank 1 event 1: deadlock under simgrid: barrier (collective #0) waits for rank 0\n"},
		{"0 init\n0 isend 1 0 8\n0 wait 0 1 0\n0 wait 0 1 0\n0 finalize\n1 recv 0 0 8\n1 finalize\n",
			"F:4: rank 0 event 3: wait of 0 to 1 tag 0 with no request outstanding (SimGrid's replay aborts)\n"},
		{"0 init\n0 isend 1 0 8\n0 wait 0 1 0\n0 finalize\n1 recv 0 0 8\n1 finalize\n", ""},
		{"0 init\n0 barrier\n1 init\n1 barrier\n", // an MPI_Abort: valid, but said
			"warning: 2 of the 2 ranks end without MPI_Finalize (0-1): the run was cut short (MPI_Abort, a crash, a job killed) or its trace lost its end\n"},
	} {
		path := filepath.Join(dir, fmt.Sprintf("t%d.ti", i))
		if err := os.WriteFile(path, []byte(c.text), 0o644); err != nil {
			t.Fatal(err)
		}
		code, out, errs := csRun("check", path)
		want := strings.ReplaceAll(c.want, "F:", path+":")
		if code != map[bool]int{true: 0, false: 1}[want == "" || strings.HasPrefix(want, "warning")] || out != want {
			t.Errorf("case %d: exit %d, stdout:\n%s\nstderr %q\nwant:\n%s", i, code, out, errs, want)
		}
	}
}
