package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sekitei/crawlkit/internal/cluster"
)

// A turn killed with kill -9 of its whole process group, as cron's job is,
// mid-fetch in 2 shards, leaves nothing running, with the local runner and
// with RUNNER=ssh (GNU parallel gives every job a process group of its own,
// which the kill does not reach; the machines' shard jobs run under sshd)
// and with RUNNER=slurm (the array job runs under Slurm's daemons):
// the turn's watchdog ends what is left, and the next turn runs. A turn
// that finds the lock held names the holder, PID and command.
func TestKilledTurnLeavesNothingRunning(t *testing.T) {
	w := setupCluster(t)
	ms, sshConf := w.machinesFor(t, 2, cluster.Options{})
	slurm := cluster.StartSlurm(t, 2)
	for _, runner := range []struct{ name, conf string }{
		{"local", "SHARDS=2\nRUNNER=local\n"},
		{"ssh", sshConf},
		{"slurm", "SHARDS=2\nRUNNER=slurm\n"},
	} {
		t.Run(runner.name, func(t *testing.T) {
			c := w.fresh(t)
			if runner.name == "slurm" {
				c.env = append(c.env, slurm.Env())
			}
			// The tools, with a fetch that, while "armed" exists, says it
			// got there and holds (a sleep started from the tools'
			// directory, so that its command line names it).
			c.bin = filepath.Join(t.TempDir(), "bin")
			noErr(t, os.MkdirAll(c.bin, 0o755))
			for _, tool := range []string{"opic", "recrawl", "sekitei", "barrel", "urlfeat"} {
				noErr(t, os.Symlink(filepath.Join(w.bin, tool), filepath.Join(c.bin, tool)))
			}
			sleep, err := exec.LookPath("sleep")
			noErr(t, err)
			copyFile(t, sleep, filepath.Join(c.bin, "fetch-hold"))
			noErr(t, os.Chmod(filepath.Join(c.bin, "fetch-hold"), 0o755))
			marks := t.TempDir()
			armed := filepath.Join(marks, "armed")
			noErr(t, os.WriteFile(filepath.Join(c.bin, "fetch"), []byte(fmt.Sprintf(`#!/bin/sh
case "$1" in sitemaps|stats|host-rates|robots|cdx) exec %[1]s "$@" ;; esac
if [ -e %[2]s ]; then touch %[3]s/reached.$$; %[4]s/fetch-hold 120; fi
exec %[1]s "$@"
`, filepath.Join(w.bin, "fetch"), armed, marks, c.bin)), 0o755))
			noErr(t, os.WriteFile(armed, nil, 0o644))
			c.writeConf(t, runner.conf)

			cmd := c.cycle()
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			var out strings.Builder
			cmd.Stdout, cmd.Stderr = &out, &out
			noErr(t, cmd.Start())
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
			for {
				if reached, _ := filepath.Glob(filepath.Join(marks, "reached.*")); len(reached) == 2 {
					break
				}
				select {
				case err := <-exited:
					t.Fatalf("the turn ended (%v) before both shards' fetches started:\n%s", err, out.String())
				case <-time.After(50 * time.Millisecond):
				}
			}
			running := turnProcesses(c, ms.RemoteDir)
			noErr(t, syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL))
			<-exited
			t.Logf("killed the turn's process group mid-fetch; %d processes of the turn were running", len(running))
			var left []string
			for start := time.Now(); time.Since(start) < 20*time.Second; time.Sleep(100 * time.Millisecond) {
				if left = turnProcesses(c, ms.RemoteDir); len(left) == 0 {
					break
				}
			}
			if len(left) > 0 {
				ps, _ := exec.Command("ps", "-eo", "pid,ppid,pgid,sid,args").Output()
				t.Fatalf("20 s after the kill, still running:\n%s\nlog:\n%s\nps:\n%s", strings.Join(left, "\n"), c.log(t), ps)
			}
			t.Logf("survivors: 0; the watchdog: %s", lastLine(c.log(t), "watchdog:"))
			if runner.name == "slurm" {
				queue := exec.Command("squeue", "-h", "-o", "%i %j")
				queue.Env = append(os.Environ(), slurm.Env())
				jobs, err := queue.Output()
				noErr(t, err)
				if strings.Contains(string(jobs), "crawl-") {
					t.Errorf("Slurm jobs of the turn still queued or running:\n%s", jobs)
				}
				if !strings.Contains(lastLine(c.log(t), "watchdog:"), "Slurm jobs ") {
					t.Errorf("the watchdog did not cancel the turn's Slurm jobs: %s", lastLine(c.log(t), "watchdog:"))
				}
			}

			os.Remove(armed)
			code, msg := exitOf(t, c.cycle())
			if code != 0 || !strings.Contains(msg, ": resume") {
				t.Fatalf("the next turn: exit %d, want 0 resuming the turn:\n%s", code, msg)
			}
		})
	}

	// A lock held by another process: the turn says who holds it.
	c := w.fresh(t)
	holder := exec.Command("flock", filepath.Join(c.crawl, "lock"), "sleep", "60")
	noErr(t, holder.Start())
	t.Cleanup(func() { holder.Process.Kill(); holder.Wait() })
	for start := time.Now(); ; time.Sleep(20 * time.Millisecond) {
		f, err := os.OpenFile(filepath.Join(c.crawl, "lock"), os.O_RDWR, 0)
		if err == nil {
			busy := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil
			f.Close()
			if busy {
				break
			}
		}
		if time.Since(start) > 10*time.Second {
			t.Fatal("flock did not take the lock")
		}
	}
	code, msg := exitOf(t, c.cycle())
	if want := fmt.Sprintf("PID %d (flock ", holder.Process.Pid); code != 75 || !strings.Contains(msg, want) {
		t.Errorf("a turn with the lock held: exit %d, want 75 naming %q:\n%s", code, want, msg)
	}
}

// turnProcesses lists the processes of a turn of crawl c: those whose
// command line names its tools or its directory, and the shard steps on
// the machines (in remoteDir).
func turnProcesses(c *world, remoteDir string) []string {
	var found []string
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		data, err := os.ReadFile(p)
		if err != nil || len(data) == 0 {
			continue
		}
		cmdline := strings.TrimSpace(strings.ReplaceAll(string(data), "\x00", " "))
		if strings.Contains(cmdline, c.bin) || strings.Contains(cmdline, c.crawl) ||
			(strings.Contains(cmdline, "--shard-step") && strings.Contains(cmdline, remoteDir)) {
			found = append(found, strings.TrimSuffix(strings.TrimPrefix(p, "/proc/"), "/cmdline")+" "+cmdline)
		}
	}
	return found
}

// lastLine returns the last line of text holding s.
func lastLine(text, s string) string {
	last := ""
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, s) {
			last = l
		}
	}
	return last
}
