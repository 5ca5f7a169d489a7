package e2e

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/sekitei/crawlkit/internal/testreport"
)

// Every tool ends with 130 after SIGINT and 143 after SIGTERM, also when its
// input ends right after the signal: the tool may then finish its work as
// if nothing happened, and the status must still say it was stopped. Each
// tool is signalled runsPerSignal times per signal, at a seeded moment after
// it has started reading, and its stdin is closed just after the signal.
func TestSignalExitStatus(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	bin := tools(t, root)
	runsPerSignal := 20
	if v, err := strconv.Atoi(os.Getenv("SIGNAL_RUNS")); err == nil && v > 0 {
		runsPerSignal = v
	}
	line := `{"url":"http://127.0.0.1:1/a","fetched_at":"2026-11-20T00:00:00Z","status":200}` + "\n"
	cmds := [][]string{
		{"urlfeat", "count"},
		{"sekitei", "update", "--state", "s.db", "--batch", "b1"},
		{"opic", "update", "--state", "o.db"},
		{"recrawl", "update", "--state", "r.db", "--batch", "b1"},
		{"barrel", "build", "--index", "idx"},
		{"fetch", "--allow-private"},
	}
	rng := rand.New(rand.NewPCG(32, 5))
	for _, args := range cmds {
		t.Run(args[0]+"_"+args[1], func(t *testing.T) {
			for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
				bad := 0
				for run := range runsPerSignal {
					dir := t.TempDir()
					code, err := signalledRun(bin, dir, args, line, sig, time.Duration(rng.IntN(3000))*time.Microsecond)
					if err != nil {
						t.Fatalf("%v run %d: %v", sig, run, err)
					}
					if code != 128+int(sig) {
						bad++
						t.Errorf("%s, %v, run %d: status %d, want %d", args, sig, run, code, 128+int(sig))
					}
				}
				testreport.Logf(t, "%v: %d of %d runs ended with %d", sig, runsPerSignal-bad, runsPerSignal, 128+int(sig))
			}
		})
	}
}

// signalledRun starts the tool in dir, gives it one input line, waits until
// the tool has read it (so that its signal handling is in place), waits
// pause, sends sig and closes the tool's stdin at once. It returns the exit
// status, or -N when the process died of signal N (its own handling of
// the signal did not run: that is a failure too).
func signalledRun(bin, dir string, args []string, line string, sig syscall.Signal, pause time.Duration) (int, error) {
	cmd := exec.Command(filepath.Join(bin, args[0]), args[1:]...)
	cmd.Dir = dir
	r, w, err := os.Pipe()
	if err != nil {
		return 0, err
	}
	cmd.Stdin = r
	cmd.Stdout, cmd.Stderr = nil, nil
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	r.Close()
	defer w.Close()
	if _, err := w.WriteString(line); err != nil {
		return 0, err
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		n, err := unix.IoctlGetInt(int(w.Fd()), unix.TIOCINQ)
		if err != nil {
			return 0, fmt.Errorf("FIONREAD: %w", err)
		}
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			return 0, errors.New("the tool did not read its first line in 20 s")
		}
		time.Sleep(time.Millisecond)
	}
	time.Sleep(pause)
	if err := cmd.Process.Signal(sig); err != nil {
		return 0, err
	}
	w.Close() // the input ends just after the signal
	err = cmd.Wait()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		return 0, err
	}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return -int(ws.Signal()), nil
	}
	return cmd.ProcessState.ExitCode(), nil
}
