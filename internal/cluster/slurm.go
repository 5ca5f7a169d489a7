package cluster

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Slurm is a one-node Slurm cluster of the test: munged, slurmctld and
// slurmd (Debian packages munge and slurm-wlm) with a configuration, key,
// spool and logs of its own, so that it touches nothing of the machine's.
type Slurm struct {
	// Conf is its slurm.conf; the commands (sbatch, sinfo) find the
	// cluster by SLURM_CONF=Conf in their environment.
	Conf string
	dir  string
}

// Env is the environment entry that points Slurm's commands at the cluster.
func (s *Slurm) Env() string { return "SLURM_CONF=" + s.Conf }

// StartSlurm starts a one-node Slurm cluster whose node runs up to cpus
// tasks at once, or skips the test with the reason when Slurm is not
// installed. Its daemons are stopped by the test's cleanup.
func StartSlurm(t *testing.T, cpus int) *Slurm {
	t.Helper()
	for _, tool := range []string{"munged", "slurmctld", "slurmd", "sbatch", "sinfo"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("Slurm needs %s: Debian packages slurm-wlm and munge (scripts/deps.sh)", tool)
		}
	}
	// The daemons' paths live in slurm.conf and munged's flags; a short
	// directory keeps munge's socket path within its limit.
	dir, err := os.MkdirTemp("", "ckslurm")
	must(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	s := &Slurm{Conf: filepath.Join(dir, "slurm.conf"), dir: dir}
	// munged wants every directory on its socket's path searchable by all.
	must(t, os.Chmod(dir, 0o755))
	for _, d := range []string{"munge", "spool", "state", "log"} {
		must(t, os.MkdirAll(filepath.Join(dir, d), 0o755))
	}
	key := make([]byte, 1024)
	f, err := os.Open("/dev/urandom")
	must(t, err)
	_, err = f.Read(key)
	f.Close()
	must(t, err)
	must(t, os.WriteFile(filepath.Join(dir, "munge", "key"), key, 0o600))
	host, err := os.Hostname()
	must(t, err)
	host, _, _ = strings.Cut(host, ".")
	user := "root"
	if os.Getuid() != 0 {
		t.Skip("the one-node Slurm cluster runs its daemons as root")
	}
	socket := filepath.Join(dir, "munge", "socket")
	must(t, os.WriteFile(s.Conf, []byte(fmt.Sprintf(`ClusterName=crawlkit
SlurmctldHost=%[1]s
SlurmctldPort=%[2]d
SlurmdPort=%[3]d
AuthType=auth/munge
AuthInfo=socket=%[4]s
CredType=cred/munge
SlurmUser=%[5]s
SlurmdUser=%[5]s
StateSaveLocation=%[6]s/state
SlurmdSpoolDir=%[6]s/spool
SlurmctldPidFile=%[6]s/slurmctld.pid
SlurmdPidFile=%[6]s/slurmd.pid
SlurmctldLogFile=%[6]s/log/slurmctld.log
SlurmdLogFile=%[6]s/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
NodeName=%[1]s CPUs=%[7]d State=UNKNOWN
PartitionName=crawl Nodes=ALL Default=YES MaxTime=INFINITE State=UP
`, host, freeTCPPort(t), freeTCPPort(t), socket, user, dir, cpus)), 0o644))

	s.daemon(t, "munged", "-F", "--socket="+socket, "--key-file="+filepath.Join(dir, "munge", "key"),
		"--log-file="+filepath.Join(dir, "log", "munged.log"), "--pid-file="+filepath.Join(dir, "munge", "pid"),
		"--seed-file="+filepath.Join(dir, "munge", "seed"))
	s.daemon(t, "slurmctld", "-D", "-i", "-f", s.Conf)
	s.daemon(t, "slurmd", "-D", "-f", s.Conf)

	// Up when the node is idle.
	deadline := time.Now().Add(60 * time.Second)
	for {
		cmd := exec.Command("sinfo", "--noheader", "--format=%t")
		cmd.Env = append(os.Environ(), s.Env())
		out, _ := cmd.CombinedOutput()
		if strings.TrimSpace(string(out)) == "idle" {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("the Slurm node is not idle: %s\n%s", out, s.Logs())
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// daemon starts a daemon in the foreground, in its own process group,
// stopped (SIGTERM, then SIGKILL) by the test's cleanup.
func (s *Slurm) daemon(t *testing.T, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
	})
	// A daemon that exits at once says why.
	select {
	case <-done:
		t.Fatalf("%s exited: %s\n%s", name, out.String(), s.Logs())
	case <-time.After(300 * time.Millisecond):
	}
}

// Logs returns the daemons' logs, for a failing test's message.
func (s *Slurm) Logs() string {
	var b strings.Builder
	for _, name := range []string{"munged", "slurmctld", "slurmd"} {
		data, _ := os.ReadFile(filepath.Join(s.dir, "log", name+".log"))
		fmt.Fprintf(&b, "--- %s.log\n%s", name, data)
	}
	return b.String()
}

func freeTCPPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
