package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestInterruptFlushesWholeLines starts the real binary, feeds it URLs
// through a pipe that stays open, interrupts it while it waits for more
// input, and checks that every record it had processed comes out as a whole
// JSON line and that it exits with status 130.
func TestInterruptFlushesWholeLines(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "urlfeat")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	cmd := exec.Command(bin)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	const n = 500 // far less than the output buffer: nothing is written before the signal
	w := bufio.NewWriter(stdin)
	for i := 0; i < n; i++ {
		fmt.Fprintf(w, "http://example.com/section/%d/page-%d.html\n", i, i)
	}
	w.Flush()
	waitBlockedReading(t, cmd.Process.Pid, stdin.(*os.File))
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(15 * time.Second):
		cmd.Process.Kill()
		t.Fatal("did not exit after SIGINT")
	}
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != 130 {
		t.Fatalf("exit: %v, stderr %s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "interrupted") {
		t.Fatalf("stderr %q", stderr.String())
	}
	out := stdout.Bytes()
	if len(out) == 0 || out[len(out)-1] != '\n' {
		t.Fatalf("output does not end with a whole line (%d bytes)", len(out))
	}
	lines := bytes.Split(bytes.TrimSuffix(out, []byte("\n")), []byte("\n"))
	for _, l := range lines {
		var v map[string]any
		if err := json.Unmarshal(l, &v); err != nil {
			t.Fatalf("torn or invalid line %q: %v", l, err)
		}
	}
	if len(lines) != n {
		t.Fatalf("%d of %d records written", len(lines), n)
	}
}

// waitBlockedReading waits until the process has drained the pipe and sits
// in a read of it: urlfeat reads, extracts and writes each line in turn, so
// it has then processed every line written. The state is read from /proc
// rather than guessed from a sleep, which a loaded machine can outlast.
func waitBlockedReading(t *testing.T, pid int, pipe *os.File) {
	t.Helper()
	stable := 0
	for deadline := time.Now().Add(30 * time.Second); stable < 3; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("urlfeat did not drain its input in 30 s")
		}
		if pipeEmpty(t, pipe) && readingPipe(pid) {
			stable++
		} else {
			stable = 0
		}
	}
}

// pipeEmpty asks the kernel how many bytes wait in the pipe (FIONREAD
// answers for either end of a Linux pipe).
func pipeEmpty(t *testing.T, pipe *os.File) bool {
	n, err := unix.IoctlGetInt(int(pipe.Fd()), unix.TIOCINQ) // TIOCINQ is FIONREAD
	if err != nil {
		t.Fatalf("FIONREAD: %v", err)
	}
	return n == 0
}

// readingPipe reports whether a thread of pid is asleep in a pipe read.
func readingPipe(pid int) bool {
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/wchan", pid))
	for _, f := range tasks {
		if b, err := os.ReadFile(f); err == nil && strings.Contains(string(b), "pipe_read") {
			return true
		}
	}
	return false
}
