package cluster

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestMachines: each machine answers over ssh at its own address, sees its
// own disk at the common path, and dies and comes back.
func TestMachines(t *testing.T) {
	ms := Start(t, 2, Options{})
	for i := 0; i < ms.Len(); i++ {
		out, err := ms.SSH(i, "echo $SSH_CONNECTION > "+ms.RemoteDir+"/who && ip -4 -o addr show eth0")
		if err != nil || !strings.Contains(out, ms.Machine(i).Addr+"/30") {
			t.Fatalf("machine %d: %v %s", i, err, out)
		}
	}
	for i := 0; i < ms.Len(); i++ {
		who, err := os.ReadFile(filepath.Join(ms.Machine(i).Disk, "who"))
		if err != nil || !strings.Contains(string(who), ms.Machine(i).Addr) {
			t.Fatalf("machine %d's disk holds %q (%v)", i, who, err)
		}
	}
	if entries, _ := os.ReadDir(ms.RemoteDir); len(entries) != 0 {
		t.Fatalf("the machines wrote to this machine's %s", ms.RemoteDir)
	}
	// A process started over ssh dies with its machine, even one that left
	// the ssh session.
	go ms.SSH(1, "setsid sh -c 'echo $$ > "+ms.RemoteDir+"/pid; exec sleep 60' < /dev/null > /dev/null 2>&1 &")
	pidFile := filepath.Join(ms.Machine(1).Disk, "pid")
	var pid []byte
	for deadline := time.Now().Add(10 * time.Second); len(pid) == 0 && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
		pid, _ = os.ReadFile(pidFile)
	}
	if len(pid) == 0 {
		t.Fatal("the process started over ssh never ran")
	}
	ms.Kill(1)
	if out, err := ms.SSH(1, "true"); err == nil {
		t.Fatalf("machine 1 answers after its death: %s", out)
	}
	// Dead, or a zombie its new parent has not reaped yet.
	if st, err := os.ReadFile("/proc/" + strings.TrimSpace(string(pid)) + "/stat"); err == nil && !strings.Contains(string(st), ") Z ") {
		t.Fatalf("process %s of the dead machine lives on: %s", bytes.TrimSpace(pid), st)
	}
	ms.Restart(t, 1)
	if out, err := ms.SSH(1, "cat "+ms.RemoteDir+"/who"); err != nil || !strings.Contains(out, ms.Machine(1).Addr) {
		t.Fatalf("machine 1 came back without its disk: %v %s", err, out)
	}
}

// TestFullDisk: a machine's disk of a given size fills up.
func TestFullDisk(t *testing.T) {
	ms := Start(t, 1, Options{DiskBytes: map[int]int64{0: 1 << 20}})
	out, err := ms.SSH(0, "head -c 2000000 /dev/zero > "+ms.RemoteDir+"/big")
	if err == nil || !strings.Contains(out, "No space left") {
		t.Fatalf("2 MB fit on a 1 MB disk: %v %s", err, out)
	}
}

// TestSlurm: an array job runs every task on the one-node cluster, and
// sbatch --wait fails when a task fails.
func TestSlurm(t *testing.T) {
	s := StartSlurm(t, 2)
	dir := t.TempDir()
	sbatch := func(script string) ([]byte, error) {
		cmd := exec.Command("sbatch", "--wait", "--quiet", "--array=0-2", "--output", filepath.Join(dir, "%a.out"), "--wrap", script)
		cmd.Env = append(os.Environ(), s.Env())
		return cmd.CombinedOutput()
	}
	if out, err := sbatch("echo task $SLURM_ARRAY_TASK_ID"); err != nil {
		t.Fatalf("sbatch: %v %s\n%s", err, out, s.Logs())
	}
	for i := 0; i < 3; i++ {
		out, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("%d.out", i)))
		if err != nil || string(out) != fmt.Sprintf("task %d\n", i) {
			t.Errorf("task %d wrote %q (%v)", i, out, err)
		}
	}
	if out, err := sbatch("test $SLURM_ARRAY_TASK_ID != 1"); err == nil {
		t.Errorf("an array job with a failing task succeeded: %s", out)
	}
}
