// Package cluster makes machines on this one for tests of the crawl loop's
// remote runners: network namespaces reached over ssh, each with its own
// disk, and a one-node Slurm cluster. Every daemon is started by the test
// and stopped by its cleanup.
//
// A machine is a Linux network namespace joined to this one by a veth pair
// on a private /30 subnet; its address exists only there. Its sshd (Debian
// openssh-server) runs inside it, in a mount namespace of its own where the
// machine's disk, a directory of the test, is bound over the one path every
// machine uses for its crawl (RemoteDir): each machine sees its own disk at
// the same path, and this machine sees none of them there, as with real
// machines. Processes started over ssh inherit both namespaces; they share
// the file system otherwise (the tools' binaries, the test's site).
package cluster

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Machines is a set of test machines.
type Machines struct {
	// RemoteDir is the path of the crawl directory on every machine: each
	// machine binds its own disk there.
	RemoteDir string
	// SSHConfig is an ssh_config(5) file that logs in to every machine
	// (as root, with a key of the test, no host-key prompts).
	SSHConfig string
	m         []*Machine
	dir       string
}

// Machine is one test machine.
type Machine struct {
	Name string // the network namespace
	Addr string // its address, reachable from this machine only
	Disk string // the directory that is its disk (RemoteDir inside it)
	sshd *exec.Cmd
	cfg  string
	done chan struct{}
}

// Options tune the machines.
type Options struct {
	// DiskBytes, when above zero for machine I, makes machine I's disk a
	// tmpfs of that size, so that it can fill up.
	DiskBytes map[int]int64
}

// ErrRefused says that this machine does not let the test make network
// namespaces (a container without CAP_NET_ADMIN, say).
var ErrRefused = errors.New("network namespaces refused")

// Probe reports whether network namespaces and veth pairs can be made
// here; its error says why not, wrapping ErrRefused.
func Probe() error {
	if _, err := exec.LookPath("ip"); err != nil {
		return fmt.Errorf("%w: no ip command (Debian package iproute2)", ErrRefused)
	}
	name := fmt.Sprintf("ckprobe%d", os.Getpid())
	if out, err := exec.Command("ip", "netns", "add", name).CombinedOutput(); err != nil {
		return fmt.Errorf("%w: ip netns add: %v: %s", ErrRefused, err, bytes.TrimSpace(out))
	}
	defer exec.Command("ip", "netns", "del", name).Run()
	veth := fmt.Sprintf("ckp%d", os.Getpid()%100000)
	out, err := exec.Command("ip", "link", "add", veth, "type", "veth", "peer", "name", veth+"x", "netns", name).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%w: ip link add veth: %v: %s", ErrRefused, err, bytes.TrimSpace(out))
	}
	exec.Command("ip", "link", "del", veth).Run()
	return nil
}

// Start makes n machines running sshd, or skips the test with the reason
// when this machine refuses network namespaces. Everything is undone by the
// test's cleanup.
func Start(t *testing.T, n int, opt Options) *Machines {
	t.Helper()
	if err := Probe(); err != nil {
		t.Skipf("the test machines need network namespaces: %v", err)
	}
	for _, tool := range []string{"/usr/sbin/sshd", "ssh", "ssh-keygen", "rsync", "unshare"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s missing: run scripts/deps.sh (Debian packages openssh-server, rsync, util-linux)", tool)
		}
	}
	dir := t.TempDir()
	ms := &Machines{RemoteDir: filepath.Join(dir, "crawl"), dir: dir}
	must(t, os.MkdirAll(ms.RemoteDir, 0o755))
	// sshd needs its privilege separation directory.
	must(t, os.MkdirAll("/run/sshd", 0o755))
	keys := filepath.Join(dir, "ssh")
	must(t, os.MkdirAll(keys, 0o700))
	for _, k := range []string{"host", "user"} {
		run(t, "ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", filepath.Join(keys, k))
	}
	pub, err := os.ReadFile(filepath.Join(keys, "user.pub"))
	must(t, err)
	must(t, os.WriteFile(filepath.Join(keys, "authorized_keys"), pub, 0o600))
	ms.SSHConfig = filepath.Join(keys, "config")
	// One connection a machine, shared by every ssh, rsync and parallel
	// job of the test (ControlMaster): a handshake costs seconds on a
	// busy machine. A socket path must be short.
	cm, err := os.MkdirTemp("", "ckcm")
	must(t, err)
	t.Cleanup(func() {
		for i := range ms.m {
			exec.Command("ssh", "-F", ms.SSHConfig, "-O", "exit", ms.Login(i)).Run()
		}
		os.RemoveAll(cm)
	})
	must(t, os.WriteFile(ms.SSHConfig, []byte(fmt.Sprintf(`Host *
  ControlMaster auto
  ControlPath %s/%%C
  ControlPersist 60
  KexAlgorithms curve25519-sha256
  User root
  IdentityFile %s
  IdentitiesOnly yes
  StrictHostKeyChecking no
  UserKnownHostsFile /dev/null
  LogLevel ERROR
  BatchMode yes
  ConnectTimeout 5
  ServerAliveInterval 2
  ServerAliveCountMax 2
`, cm, filepath.Join(keys, "user"))), 0o600))

	// A random 10.x.y.0/24 for this test's /30 links, so that tests run
	// at the same time do not collide; names carry a random tag too.
	var b [4]byte
	rand.Read(b[:])
	r := binary.BigEndian.Uint32(b[:])
	net := fmt.Sprintf("10.%d.%d", 100+r%150, (r>>8)%256)
	tag := strconv.FormatUint(uint64(r>>16)%100000, 36)
	for i := 0; i < n; i++ {
		m := &Machine{
			Name: fmt.Sprintf("ck%sm%d", tag, i),
			Addr: fmt.Sprintf("%s.%d", net, 4*i+2),
			Disk: filepath.Join(dir, fmt.Sprintf("disk%d", i)),
		}
		ms.m = append(ms.m, m)
		must(t, os.MkdirAll(m.Disk, 0o755))
		if size := opt.DiskBytes[i]; size > 0 {
			run(t, "mount", "-t", "tmpfs", "-o", fmt.Sprintf("size=%d", size), "crawlkit-test-disk", m.Disk)
			t.Cleanup(func() { exec.Command("umount", "-l", m.Disk).Run() })
		}
		host := fmt.Sprintf("ck%sh%d", tag, i)
		run(t, "ip", "netns", "add", m.Name)
		t.Cleanup(func() { exec.Command("ip", "netns", "del", m.Name).Run() })
		run(t, "ip", "link", "add", host, "type", "veth", "peer", "name", "eth0", "netns", m.Name)
		t.Cleanup(func() { exec.Command("ip", "link", "del", host).Run() })
		run(t, "ip", "addr", "add", fmt.Sprintf("%s.%d/30", net, 4*i+1), "dev", host)
		run(t, "ip", "link", "set", host, "up")
		m.Exec(t, "ip", "addr", "add", m.Addr+"/30", "dev", "eth0")
		m.Exec(t, "ip", "link", "set", "eth0", "up")
		m.Exec(t, "ip", "link", "set", "lo", "up")
		m.cfg = filepath.Join(keys, m.Name+".conf")
		must(t, os.WriteFile(m.cfg, []byte(fmt.Sprintf(`ListenAddress %s
HostKey %s
AuthorizedKeysFile %s
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
PidFile none
MaxStartups 200
MaxSessions 200
LogLevel ERROR
`, m.Addr, filepath.Join(keys, "host"), filepath.Join(keys, "authorized_keys"))), 0o600))
		ms.startSSHD(t, m)
		t.Cleanup(func() { m.stop() })
	}
	return ms
}

// Len is the number of machines.
func (ms *Machines) Len() int { return len(ms.m) }

// Machine returns machine i.
func (ms *Machines) Machine(i int) *Machine { return ms.m[i] }

// Login is machine i's sshlogin for ssh and GNU parallel.
func (ms *Machines) Login(i int) string { return "root@" + ms.m[i].Addr }

// HostsFile writes the machines' sshlogins, one a line (GNU parallel's
// --slf format), to a file and returns its path.
func (ms *Machines) HostsFile(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	for i := range ms.m {
		fmt.Fprintln(&b, ms.Login(i))
	}
	path := filepath.Join(ms.dir, "hosts")
	must(t, os.WriteFile(path, []byte(b.String()), 0o644))
	return path
}

// SSH runs a command on machine i over ssh and returns its combined output.
func (ms *Machines) SSH(i int, command string) (string, error) {
	out, err := exec.Command("ssh", "-F", ms.SSHConfig, ms.Login(i), command).CombinedOutput()
	return string(out), err
}

// startSSHD starts machine m's sshd in its network namespace and in a
// mount namespace of its own holding its disk at RemoteDir, and waits
// until it answers.
func (ms *Machines) startSSHD(t *testing.T, m *Machine) {
	t.Helper()
	// unshare makes the bind mount private to this sshd and what it
	// starts; the namespace goes away with the last of them.
	script := fmt.Sprintf("mount --bind %q %q && ", m.Disk, ms.RemoteDir)
	// The shell sshd starts reads the user's startup files, which on a
	// developer's machine may take seconds (pyenv init, say) and would
	// stand in every ssh, rsync and parallel job's way; a fresh machine
	// has none.
	if home, err := os.UserHomeDir(); err == nil {
		for _, f := range []string{".bashrc", ".bash_profile", ".bash_login", ".profile"} {
			if p := filepath.Join(home, f); fileExists(p) {
				script += fmt.Sprintf("mount --bind /dev/null %q && ", p)
			}
		}
	}
	script += fmt.Sprintf("exec /usr/sbin/sshd -D -e -f %q", m.cfg)
	cmd := exec.Command("ip", "netns", "exec", m.Name, "unshare", "--mount", "--propagation", "private", "sh", "-c", script)
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	// Its own process group, so that stopping the machine reaches it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	must(t, cmd.Start())
	m.sshd, m.done = cmd, make(chan struct{})
	go func() { cmd.Wait(); close(m.done) }()
	deadline := time.Now().Add(20 * time.Second)
	for {
		i := ms.index(m)
		out, err := ms.SSH(i, "true")
		if err == nil {
			return
		}
		select {
		case <-m.done:
			t.Fatalf("sshd of %s exited: %s", m.Name, log.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("sshd of %s does not answer: %v %s %s", m.Name, err, out, log.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (ms *Machines) index(m *Machine) int {
	for i, x := range ms.m {
		if x == m {
			return i
		}
	}
	return -1
}

// Kill makes machine i die: its sshd and every process started through it
// are killed at once (SIGKILL), as a power cut would; its disk stays.
func (ms *Machines) Kill(i int) { ms.m[i].stop() }

// Restart brings machine i back after Kill: a new sshd on the same address
// with the same disk.
func (ms *Machines) Restart(t *testing.T, i int) {
	t.Helper()
	ms.startSSHD(t, ms.m[i])
}

// stop kills the sshd and every process of the machine: those in the
// sshd's mount namespace, which whatever runs over ssh inherits, even a
// process that left the sshd's process tree (setsid, a double fork).
func (m *Machine) stop() {
	if m.sshd == nil || m.sshd.Process == nil {
		return
	}
	pid := m.sshd.Process.Pid
	ns, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/mnt", pid))
	for round := 0; round < 3; round++ {
		syscall.Kill(pid, syscall.SIGKILL)
		if err == nil {
			for _, p := range inNamespace(ns) {
				syscall.Kill(p, syscall.SIGKILL)
			}
		}
		time.Sleep(30 * time.Millisecond)
	}
	select {
	case <-m.done:
	case <-time.After(5 * time.Second):
	}
	m.sshd = nil
}

// inNamespace lists the processes in mount namespace ns (a readlink of
// /proc/PID/ns/mnt).
func inNamespace(ns string) []int {
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if l, err := os.Readlink(filepath.Join("/proc", e.Name(), "ns", "mnt")); err == nil && l == ns {
			pids = append(pids, p)
		}
	}
	return pids
}

// Exec runs a command in machine m's network namespace (not over ssh:
// for setting the machine up) and fails the test if it fails.
func (m *Machine) Exec(t *testing.T, args ...string) string {
	t.Helper()
	return run(t, append([]string{"ip", "netns", "exec", m.Name}, args...)...)
}

func run(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command(args[0], args[1:]...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
