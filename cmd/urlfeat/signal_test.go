package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
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
	time.Sleep(300 * time.Millisecond) // let it process the lines and block reading
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
