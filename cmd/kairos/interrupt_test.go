package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestInterrupt interrupts a kairos gen writing a long trace, once its
// temporary output exists: the run says why and ends of the signal (a
// shell's $? is 130), and leaves nothing in the output's directory. Before, the hidden
// ".name.tmp*" file stayed, and a TI trace's per-rank directory
// (index.txt_files) stayed as ".index.txt_files.tmp*" with the ranks
// already written.
func TestInterrupt(t *testing.T) {
	for _, tc := range []struct{ out, tmp string }{
		{"long.ti.zst", ".long.ti.zst.tmp*"},
		{"index.txt", ".index.txt_files.tmp*/rank-0.ti"},
	} {
		t.Run(tc.out, func(t *testing.T) {
			dir := t.TempDir()
			interruptGen(t, filepath.Join(dir, tc.out), filepath.Join(dir, tc.tmp))
			left, _ := os.ReadDir(dir)
			for _, e := range left {
				t.Errorf("left in the output's directory: %s", e.Name())
			}
		})
	}
}

// interruptGen starts a kairos gen of a long trace to out, and interrupts
// it once a file matching tmp exists.
func interruptGen(t *testing.T, out, tmp string) {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "KAIROS_TEST_ARGS="+strings.Join([]string{"gen", "stencil2d", "--grid", "32x32", "--iterations", "1000000", "--to", "ti", "-o", out}, "\n"))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	deadline := time.Now().Add(time.Minute)
	for {
		tmps, _ := filepath.Glob(tmp)
		if len(tmps) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no temporary output after a minute")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	var ee *exec.ExitError
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !errors.As(err, &ee) || !ok || !ws.Signaled() || ws.Signal() != syscall.SIGINT {
		t.Errorf("exit: %v, want the process ended by SIGINT; stderr:\n%s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "interrupt: stopped; the outputs being written were discarded") {
		t.Errorf("stderr:\n%s", stderr.String())
	}
}
