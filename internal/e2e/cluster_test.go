package e2e

import (
	"crypto/sha256"
	"fmt"
	"io/fs"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sekitei/crawlkit/internal/cluster"
	"github.com/sekitei/crawlkit/pkg/record"
)

// The turns of the cluster tests, on a clock of their own so that every
// crawl ranks and updates at the same times: the third turn two days after
// the first, when pages are due again.
var clusterClock = []string{"2026-11-23T00:00:00Z", "2026-11-23T06:00:00Z", "2026-11-25T00:00:00Z"}

// crawlResult is what a crawl chose and fetched, turn by turn, and the
// importance it ended with.
type crawlResult struct {
	cands, fetched, deferred [][]string
	pages                    []string           // "url cash history", by importance
	importance               map[string]float64 // url: importance
	times                    []float64          // seconds a turn
	moved                    []string           // bytes over ssh a turn (the log's line)
}

// clusterCrawl crawls with the settings conf for the turns of clusterClock.
// opicStates returns the crawl's opic states (they may live on machines).
// before, when not nil, runs before each turn (it may run failing turns).
func (w *world) clusterCrawl(t *testing.T, conf string, opicStates func() []string, before func(turn int)) crawlResult {
	t.Helper()
	var r crawlResult
	for i, now := range clusterClock {
		w.writeConf(t, conf+"RATE=2000\nOPIC_ARGS=\"--window 0\"\nNOW="+now+"\n")
		if before != nil {
			before(i + 1)
		}
		t0 := time.Now()
		out := w.turn(t, fmt.Sprintf("turn %d", i+1))
		r.times = append(r.times, time.Since(t0).Seconds())
		if m := regexp.MustCompile(`ssh: (\d+) bytes to the machines, (\d+) back`).FindStringSubmatch(out); m != nil {
			r.moved = append(r.moved, m[1]+" up, "+m[2]+" back")
		}
	}
	r.cands, r.fetched, r.deferred = w.perTurn(t, "candidates.ndjson"), w.fetchedURLs(t), w.perTurn(t, "deferred.ndjson")
	r.pages, r.importance = w.showOpic(t, opicStates())
	return r
}

// showOpic returns every page of the opic states as "url cash history"
// lines by importance, and each page's importance.
func (w *world) showOpic(t *testing.T, states []string) ([]string, map[string]float64) {
	t.Helper()
	args := []string{"show", "--tsv", "--header"}
	for _, st := range states {
		args = append(args, "--state", st)
	}
	out, err := exec.Command(filepath.Join(w.bin, "opic"), args...).Output()
	if err != nil {
		t.Fatalf("opic %v: %v", args, err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	header := strings.Split(lines[0], "\t")
	col := slices.Index(header, "importance")
	if col < 0 {
		t.Fatalf("opic show has no importance column: %q", lines[0])
	}
	var pages []string
	imp := map[string]float64{}
	for _, line := range lines[1:] {
		f := strings.Split(line, "\t")
		pages = append(pages, strings.Join(f[:3], " "))
		v, err := strconv.ParseFloat(f[col], 64)
		if err != nil {
			t.Fatalf("importance %q: %v", f[col], err)
		}
		imp[f[0]] = v
	}
	return pages, imp
}

// sameCrawl fails the test where two crawls differ: the candidates (the
// recrawl decisions), the pages fetched and deferred per turn, every page's
// cash and history, and its importance to 1e-9.
func sameCrawl(t *testing.T, what string, want, got crawlResult) {
	t.Helper()
	if len(got.fetched) != len(clusterClock) || len(want.fetched) != len(clusterClock) {
		t.Fatalf("%s: %d and %d turns recorded", what, len(want.fetched), len(got.fetched))
	}
	for i := range want.fetched {
		for _, c := range []struct {
			name      string
			want, got []string
		}{{"candidates", want.cands[i], got.cands[i]}, {"fetched", want.fetched[i], got.fetched[i]}, {"deferred", want.deferred[i], got.deferred[i]}} {
			if !slices.Equal(c.want, c.got) {
				t.Errorf("%s: turn %d: %d %s unsharded, %d here, not the same; only unsharded: %v; only here: %v",
					what, i+1, len(c.want), c.name, len(c.got), firstMissing(c.want, c.got), firstMissing(c.got, c.want))
			}
		}
	}
	if len(want.pages) < 300 || !slices.Equal(want.pages, got.pages) {
		t.Errorf("%s: opic cash and history of %d pages unsharded and %d here differ", what, len(want.pages), len(got.pages))
	}
	for u, v := range want.importance {
		if g, ok := got.importance[u]; !ok || math.Abs(g-v) > 1e-9 {
			t.Errorf("%s: importance of %s: %g unsharded, %g here", what, u, v, g)
		}
	}
}

// firstMissing lists up to 5 lines of a that b lacks.
func firstMissing(a, b []string) []string {
	in := map[string]bool{}
	for _, x := range b {
		in[x] = true
	}
	var out []string
	for _, x := range a {
		if !in[x] && len(out) < 5 {
			out = append(out, x)
		}
	}
	return out
}

// clusterHosts are the sites of the cluster tests' web: with 3 shards
// (record.ShardOf) a.test and b.test are shard 0's, f.test shard 1's and
// c.test shard 2's, so that every machine has hosts to crawl.
var clusterHosts = []string{"a.test", "b.test", "c.test", "f.test"}

// setupCluster serves the cluster tests' web, seeded with every site's
// home page so that every shard fetches from the first turn on.
func setupCluster(t *testing.T) *world {
	t.Helper()
	w := setupWeb(t, clusterHosts)
	seeds := filepath.Join(w.crawl, "seeds.txt")
	first, err := os.ReadFile(seeds)
	if err != nil {
		t.Fatal(err)
	}
	var all strings.Builder
	for _, host := range clusterHosts {
		all.WriteString(strings.Replace(string(first), clusterHosts[0], host, 1))
	}
	if err := os.WriteFile(seeds, []byte(all.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return w
}

// machinesFor starts n machines, each serving the test's web on its own
// loopback (the same files, port and names as the unsharded crawl's), and
// returns them with the crawl.conf lines that run the shards on them.
func (w *world) machinesFor(t *testing.T, n int, opt cluster.Options) (*cluster.Machines, string) {
	t.Helper()
	ms := cluster.Start(t, n, opt)
	port := w.port(t)
	for i := 0; i < n; i++ {
		m := ms.Machine(i)
		state := filepath.Join(t.TempDir(), "nginx")
		m.Exec(t, filepath.Join(w.root, "scripts/serve-site.sh"), "start", w.site, port, state)
		t.Cleanup(func() { exec.Command(filepath.Join(w.root, "scripts/serve-site.sh"), "stop", state).Run() })
	}
	conf := fmt.Sprintf("SHARDS=%d\nRUNNER=ssh\nMACHINES=%s\nREMOTE_DIR=%s\nSSH=\"ssh -F %s\"\nMIN_FREE_MB=1\n",
		n, ms.HostsFile(t), ms.RemoteDir, ms.SSHConfig)
	return ms, conf
}

// port is the port the test's web is served on, as its seed URLs say.
func (w *world) port(t *testing.T) string {
	t.Helper()
	seeds, err := os.ReadFile(filepath.Join(w.site, "seeds.txt"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`^https?://[^/:]+:(\d+)/`).FindSubmatch(seeds)
	if m == nil {
		t.Fatalf("no port in the seed URLs: %.100s", seeds)
	}
	return string(m[1])
}

// remoteStates lists the opic states on the machines' disks, and checks
// that each shard's states are on its machine alone.
func remoteStates(t *testing.T, ms *cluster.Machines, shards int) []string {
	t.Helper()
	var states []string
	for i := 0; i < shards; i++ {
		for j := 0; j < ms.Len(); j++ {
			for _, tool := range []string{"opic", "recrawl"} {
				p := filepath.Join(ms.Machine(j).Disk, "state", fmt.Sprintf("%s.%d.db", tool, i))
				_, err := os.Stat(p)
				if onIt := j == i%ms.Len(); onIt != (err == nil) {
					t.Errorf("shard %d's %s state on machine %d: %v (its machine is %d)", i, tool, j, err, i%ms.Len())
				}
			}
		}
		states = append(states, filepath.Join(ms.Machine(i%ms.Len()).Disk, "state", fmt.Sprintf("opic.%d.db", i)))
	}
	return states
}

// TestClusterSSHAgrees crawls the generated web unsharded on this machine
// and in 3 shards on 3 machines over GNU parallel and ssh: every turn takes
// the same candidates, fetches and defers the same pages, and every page
// ends with the same cash and history and importance. The shards' states
// and WARC files are on their machines' disks, none here.
func TestClusterSSHAgrees(t *testing.T) {
	w := setupCluster(t)
	ms, conf := w.machinesFor(t, 3, cluster.Options{})
	one := w.fresh(t)
	want := one.clusterCrawl(t, "SHARDS=1\n", func() []string { return one.opicStates(t) }, nil)
	three := w.fresh(t)
	// Each turn's crawl.conf has the size of the last (only NOW changes).
	// Giving it the mtime of the copy on machine 0, as when the test writes
	// it in the second the last turn sent its copy, is what rsync's quick
	// check cannot tell from an unchanged file: the conf must still travel.
	sameSecond := func(turn int) {
		if turn == 1 {
			return
		}
		st, err := os.Stat(filepath.Join(ms.Machine(0).Disk, "crawl.conf"))
		noErr(t, err)
		noErr(t, os.Chtimes(filepath.Join(three.crawl, "crawl.conf"), st.ModTime(), st.ModTime()))
	}
	got := three.clusterCrawl(t, conf, func() []string { return remoteStates(t, ms, 3) }, sameSecond)
	sameCrawl(t, "3 machines over ssh", want, got)
	// A shard fetches the sites whose host:port hashes to it; the port is
	// the test server's, a new one each run, so a shard may own no site.
	owns := map[int]bool{}
	for _, h := range clusterHosts {
		r, err := record.Parse(fmt.Appendf(nil, `{"url":"http://%s:%s/"}`, h, w.port(t)))
		if err != nil {
			t.Fatal(err)
		}
		owns[record.ShardOf(record.RecordHost(r), 3)] = true
	}
	for i := 0; i < 3; i++ {
		warcs, _ := filepath.Glob(filepath.Join(ms.Machine(i).Disk, "warc", "*.warc.gz"))
		if owns[i] && len(warcs) == 0 {
			// what the machine holds, for the next look at this
			var held []string
			filepath.WalkDir(ms.Machine(i).Disk, func(p string, d fs.DirEntry, err error) error {
				if err == nil && !d.IsDir() && !strings.Contains(p, "/state/") && !strings.Contains(p, "/batches/") {
					held = append(held, strings.TrimPrefix(p, ms.Machine(i).Disk))
				}
				return nil
			})
			t.Errorf("machine %d owns a site but holds no WARC file; it holds %q", i, held)
		}
		t.Logf("machine %d: owns a seeded site %v, %d WARC files", i, owns[i], len(warcs))
		if _, err := os.Stat(filepath.Join(ms.Machine(i).Disk, fmt.Sprintf("index.%d", i))); err != nil {
			t.Errorf("machine %d has no index of its shard: %v", i, err)
		}
	}
	for _, glob := range []string{"warc/*", "state/opic*", "state/recrawl*"} {
		if m, _ := filepath.Glob(filepath.Join(three.crawl, glob)); len(m) != 0 {
			t.Errorf("the coordinator holds %v", m)
		}
	}
	if len(got.moved) != len(clusterClock) {
		t.Errorf("the log tells the bytes moved of %d turns: %v", len(got.moved), got.moved)
	}
	t.Logf("turn times: unsharded %.1f s, 3 machines over ssh %.1f s (mean of %d turns); moved per turn: %s",
		mean(want.times), mean(got.times), len(clusterClock), strings.Join(got.moved, "; "))
	t.Logf("bytes moved per turn and file (sent: times the machines; back: the shards' files):\n%s", three.movedTable(t))
}

// movedTable sums the loop's account of the bytes each turn moved
// (batches/*/moved: "STEP FILE SENT BACK" lines) by the kind of file, the
// shard's number and the turn's directory left out.
func (w *world) movedTable(t *testing.T) string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(w.crawl, "batches", "*", "moved"))
	shardNo := regexp.MustCompile(`\.\d+\.`)
	var b strings.Builder
	for turn, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var kinds []string
		sums := map[string][2]int64{}
		for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			fields := strings.Fields(line)
			if len(fields) != 4 {
				t.Fatalf("%s: %q is not STEP FILE SENT BACK", f, line)
			}
			kind := shardNo.ReplaceAllString(filepath.Base(fields[1]), ".I.")
			if _, ok := sums[kind]; !ok {
				kinds = append(kinds, kind)
			}
			sent, _ := strconv.ParseInt(fields[2], 10, 64)
			back, _ := strconv.ParseInt(fields[3], 10, 64)
			s := sums[kind]
			sums[kind] = [2]int64{s[0] + sent, s[1] + back}
		}
		fmt.Fprintf(&b, "turn %d:", turn+1)
		for _, k := range kinds {
			fmt.Fprintf(&b, " %s %d/%d", k, sums[k][0], sums[k][1])
		}
		b.WriteString("\n")
	}
	return b.String()
}

func mean(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// treeFiles hashes every file under dirs, by path.
func treeFiles(t *testing.T, dirs ...string) map[string]string {
	t.Helper()
	sums := map[string]string{}
	for _, dir := range dirs {
		filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			sums[p] = fmt.Sprintf("%x", sha256.Sum256(data))
			return nil
		})
	}
	return sums
}

// changedFiles lists the paths added, removed or changed from a to b.
func changedFiles(a, b map[string]string) []string {
	var out []string
	for p, s := range a {
		if b[p] != s {
			out = append(out, p)
		}
	}
	for p := range b {
		if _, ok := a[p]; !ok {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}

// TestClusterMachineDies kills machine 1 (its sshd and every process
// started through it, as a power cut would) while it runs shard 1's opic
// exchange in turn 2, after the other shards may have finished theirs. The
// turn fails naming the machine and the shard; a turn run while the machine
// is down fails the same way before any shard's state changes; once the
// machine is back the turn resumes and the crawl ends exactly as the
// unsharded one: nothing lost, nothing applied twice.
func TestClusterMachineDies(t *testing.T) {
	w := setupCluster(t)
	ms, conf := w.machinesFor(t, 3, cluster.Options{})
	one := w.fresh(t)
	want := one.clusterCrawl(t, "SHARDS=1\n", func() []string { return one.opicStates(t) }, nil)

	three := w.fresh(t)
	// The tools, with an opic that, on a machine whose disk holds the mark
	// "armed", says it got there and waits to be killed.
	three.bin = filepath.Join(t.TempDir(), "bin")
	noErr(t, os.MkdirAll(three.bin, 0o755))
	for _, tool := range []string{"fetch", "recrawl", "sekitei", "barrel"} {
		noErr(t, os.Symlink(filepath.Join(w.bin, tool), filepath.Join(three.bin, tool)))
	}
	armed, reached := filepath.Join(ms.RemoteDir, "armed"), filepath.Join(ms.RemoteDir, "reached")
	noErr(t, os.WriteFile(filepath.Join(three.bin, "opic"), []byte(fmt.Sprintf(`#!/bin/sh
if [ "$1" = exchange ] && [ -e %s ]; then rm -f %[1]s; touch %s; exec sleep 120; fi
exec %s "$@"
`, armed, reached, filepath.Join(w.bin, "opic"))), 0o755))
	victim := ms.Machine(1)
	login := regexp.QuoteMeta(ms.Login(1))
	others := func() map[string]string { return treeFiles(t, ms.Machine(0).Disk, ms.Machine(2).Disk) }

	got := three.clusterCrawl(t, conf, func() []string { return remoteStates(t, ms, 3) }, func(turn int) {
		if turn != 2 {
			return
		}
		noErr(t, os.WriteFile(filepath.Join(victim.Disk, "armed"), nil, 0o644))
		cmd := three.cycle()
		var out strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &out
		noErr(t, cmd.Start())
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		for {
			if _, err := os.Stat(filepath.Join(victim.Disk, "reached")); err == nil {
				break
			}
			select {
			case err := <-exited:
				t.Fatalf("the turn ended (%v) before shard 1's opic exchange started on machine 1:\n%s", err, out.String())
			case <-time.After(50 * time.Millisecond):
			}
		}
		ms.Kill(1)
		err := <-exited
		if err == nil || !regexp.MustCompile(`opic_exchange: shard 1 on `+login+` failed`).MatchString(out.String()) {
			t.Fatalf("the turn whose machine died: %v, without naming shard 1 and its machine %s:\n%s", err, ms.Login(1), out.String())
		}
		if !strings.Contains(three.log(t), "opic: failed") {
			t.Errorf("cycle.log does not say the opic step failed:\n%s", three.log(t))
		}
		// While it is down, a turn stops before any shard's state changes.
		before := others()
		code, msg := exitOf(t, three.cycle())
		if code == 0 || !regexp.MustCompile(`shard 1 on `+login+` failed: unreachable`).MatchString(msg) {
			t.Fatalf("a turn with machine 1 down: exit %d, without naming shard 1 and its machine:\n%s", code, msg)
		}
		if changed := changedFiles(before, others()); len(changed) > 0 {
			t.Errorf("a turn with machine 1 down changed the other machines' disks: %v", changed)
		}
		ms.Restart(t, 1)
		os.Remove(filepath.Join(victim.Disk, "reached"))
	})
	sameCrawl(t, "3 machines, one dying in turn 2", want, got)
}

// TestClusterFaultsStopTheTurn gives one machine a full disk, then another
// a shard's state made with another SHARDS value: each time the turn stops
// before any shard's state changes, with a message naming the shard and its
// machine; once the fault is mended the turn completes.
func TestClusterFaultsStopTheTurn(t *testing.T) {
	w := setupCluster(t)
	ms, conf := w.machinesFor(t, 3, cluster.Options{DiskBytes: map[int]int64{2: 96 << 20}})
	c := w.fresh(t)
	c.writeConf(t, conf+"MIN_FREE_MB=16\nRATE=2000\nNOW="+clusterClock[0]+"\n")
	c.turn(t, "turn 1")
	c.writeConf(t, conf+"MIN_FREE_MB=16\nRATE=2000\nNOW="+clusterClock[1]+"\n")
	// What a turn keeps: the states, WARC files and indexes (the turn's
	// crawl.conf and batch files travel to every machine, by design).
	disks := func(skip int) map[string]string {
		dirs := []string{filepath.Join(c.crawl, "state"), filepath.Join(c.crawl, "warc"), filepath.Join(c.crawl, "index")}
		for i := 0; i < ms.Len(); i++ {
			if i != skip {
				d := ms.Machine(i).Disk
				dirs = append(dirs, filepath.Join(d, "state"), filepath.Join(d, "warc"), filepath.Join(d, fmt.Sprintf("index.%d", i)))
			}
		}
		return treeFiles(t, dirs...)
	}
	stops := func(what string, machine int, why string) {
		t.Helper()
		before := disks(machine)
		code, out := exitOf(t, c.cycle())
		want := regexp.MustCompile(fmt.Sprintf(`shard %d on (root@)?%s: %s`, machine, regexp.QuoteMeta(ms.Machine(machine).Addr), why))
		if code == 0 || !want.MatchString(out) {
			t.Fatalf("%s: exit %d, without %q:\n%s", what, code, want, out)
		}
		if changed := changedFiles(before, disks(machine)); len(changed) > 0 {
			t.Errorf("%s: the other machines' disks or the coordinator's states changed: %v", what, changed)
		}
	}

	// Machine 2's disk holds less than MIN_FREE_MB.
	fill := filepath.Join(ms.Machine(2).Disk, "filler")
	var st syscall.Statfs_t
	noErr(t, syscall.Statfs(ms.Machine(2).Disk, &st))
	free := int64(st.Bavail) * st.Bsize
	noErr(t, os.WriteFile(fill, make([]byte, free-8<<20), 0o644))
	stops("a full disk on machine 2", 2, `\d+ MB free in \S+, less than MIN_FREE_MB=16`)
	noErr(t, os.Remove(fill))

	// Machine 1 holds a state of SHARDS=4.
	shards := filepath.Join(ms.Machine(1).Disk, "state", "shards")
	noErr(t, os.WriteFile(shards, []byte("4\n"), 0o644))
	stops("a state of SHARDS=4 on machine 1", 1, `the state in \S+ was made with SHARDS=4, the crawl has SHARDS=3`)
	noErr(t, os.WriteFile(shards, []byte("3\n"), 0o644))

	out := c.turn(t, "turn 2, mended")
	if !strings.Contains(out, "complete") {
		t.Errorf("turn 2 did not complete:\n%s", out)
	}
}

// TestClusterSlurmAgrees crawls the generated web unsharded and in 3 shards
// as Slurm array jobs (sbatch --array=0-2) on a one-node cluster started by
// the test: the same candidates, pages fetched and deferred per turn, and
// the same importance, cash and history of every page.
func TestClusterSlurmAgrees(t *testing.T) {
	w := setupCluster(t)
	slurm := cluster.StartSlurm(t, 2)
	one := w.fresh(t)
	want := one.clusterCrawl(t, "SHARDS=1\n", func() []string { return one.opicStates(t) }, nil)
	three := w.fresh(t)
	three.env = append(three.env, slurm.Env())
	got := three.clusterCrawl(t, "SHARDS=3\nRUNNER=slurm\n", func() []string { return three.opicStates(t) }, nil)
	sameCrawl(t, "3 shards as Slurm array jobs", want, got)
	for i := 0; i < 3; i++ {
		if outs, _ := filepath.Glob(filepath.Join(three.crawl, "batches", "*", "slurm", fmt.Sprintf("*.%d.out", i))); len(outs) == 0 {
			t.Errorf("no Slurm task of shard %d left its output", i)
		}
	}
	t.Logf("turn times: unsharded %.1f s, 3 shards as Slurm array jobs %.1f s (mean of %d turns)",
		mean(want.times), mean(got.times), len(clusterClock))
}

func noErr(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
