// Package e2e tests the tools together: scripts/crawl-cycle.sh over a
// generated web served by nginx on loopback, as cron would run it.
package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/sekitei/crawlkit/internal/sitegen"
)

// world is a served generated web and a crawl directory for it.
type world struct {
	root, bin, site, crawl string
}

func setup(t *testing.T) *world {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	w := &world{root: root, bin: filepath.Join(tmp, "bin"), site: filepath.Join(tmp, "site"), crawl: filepath.Join(tmp, "crawl")}
	build := exec.Command("go", "build", "-o", w.bin+"/", "./cmd/...")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	port := freePort(t)
	cfg := sitegen.Config{Seed: 7, Hosts: []string{"a.test", "b.test", "c.test"}, Port: port, Articles: 240, Wiki: 90, PerDay: 10}
	if err := sitegen.Generate(cfg).Write(w.site); err != nil {
		t.Fatal(err)
	}
	serve := exec.Command(filepath.Join(root, "scripts/serve-site.sh"), "start", w.site, fmt.Sprint(port), filepath.Join(tmp, "nginx"))
	if out, err := serve.CombinedOutput(); err != nil {
		t.Fatalf("nginx (installed by scripts/deps.sh): %v\n%s", err, out)
	}
	t.Cleanup(func() {
		exec.Command(filepath.Join(root, "scripts/serve-site.sh"), "stop", filepath.Join(tmp, "nginx")).Run()
	})
	os.MkdirAll(w.crawl, 0o755)
	copyFile(t, filepath.Join(w.site, "seeds.txt"), filepath.Join(w.crawl, "seeds.txt"))
	copyFile(t, filepath.Join(w.site, "good.txt"), filepath.Join(w.crawl, "good.txt"))
	conf := fmt.Sprintf("FETCH_ARGS=\"--allow-private --hosts-file %s/hosts --delay 0 --per-host 2\"\nFRONTIER_N=300\nRECRAWL_N=50\nSITE_QUOTA=200\nMIN_QUOTA=10\n", w.site)
	if err := os.WriteFile(filepath.Join(w.crawl, "crawl.conf"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	return w
}

func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func copyFile(t *testing.T, from, to string) {
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func (w *world) cycle() *exec.Cmd {
	cmd := exec.Command(filepath.Join(w.root, "scripts/crawl-cycle.sh"), w.crawl)
	cmd.Env = append(os.Environ(), "CRAWLKIT_BIN="+w.bin)
	return cmd
}

// fetchedURLs returns the urls of the fetch records of every turn, by turn.
func (w *world) fetchedURLs(t *testing.T) [][]string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(w.crawl, "batches", "*", "fetched.ndjson"))
	var turns [][]string
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		var urls []string
		sc := bufio.NewScanner(fh)
		sc.Buffer(nil, 1<<24)
		for sc.Scan() {
			var rec struct {
				URL string `json:"url"`
			}
			if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			urls = append(urls, rec.URL)
		}
		fh.Close()
		turns = append(turns, urls)
	}
	return turns
}

func TestCrawlCycle(t *testing.T) {
	w := setup(t)
	for i := 1; i <= 4; i++ {
		if out, err := w.cycle().CombinedOutput(); err != nil {
			t.Fatalf("turn %d: %v\n%s", i, err, out)
		}
	}
	turns := w.fetchedURLs(t)
	if len(turns) != 4 {
		t.Fatalf("%d turns recorded", len(turns))
	}
	seen := map[string]int{}
	total := 0
	for i, urls := range turns {
		inTurn := map[string]bool{}
		for _, u := range urls {
			if inTurn[u] {
				t.Fatalf("turn %d fetched %s twice", i+1, u)
			}
			inTurn[u] = true
			seen[u]++
			total++
		}
	}
	hosts := map[string]bool{}
	for u := range seen {
		hosts[strings.SplitN(strings.TrimPrefix(u, "http://"), "/", 2)[0]] = true
	}
	if total < 300 || len(hosts) != 3 {
		t.Fatalf("fetched %d records of %d URLs on %d hosts", total, len(seen), len(hosts))
	}
	w.checkLastFilter(t)
	// Every part of the loop left its product.
	for _, p := range []string{"state/opic.state", "state/pages.ndjson", "state/segments.ndjson", "index/MANIFEST", "logs/cycle.log"} {
		if st, err := os.Stat(filepath.Join(w.crawl, p)); err != nil || st.Size() == 0 {
			t.Errorf("%s missing or empty: %v", p, err)
		}
	}
	out, err := exec.Command(filepath.Join(w.bin, "barrel"), "stats", "--index", filepath.Join(w.crawl, "index")).Output()
	if err != nil || !strings.Contains(string(out), `"pages":`) {
		t.Fatalf("barrel stats: %v %s", err, out)
	}
	log, _ := os.ReadFile(filepath.Join(w.crawl, "logs", "cycle.log"))
	if n := strings.Count(string(log), ": complete in "); n != 4 {
		t.Fatalf("log shows %d complete turns:\n%s", n, log)
	}
}

// TestCrawlCycleResumes kills a turn during its fetch and runs it again: the
// turn completes, and no URL of it is fetched twice.
func TestCrawlCycleResumes(t *testing.T) {
	w := setup(t)
	// Two plain turns, then a slow one to kill mid-fetch.
	for i := 0; i < 2; i++ {
		if out, err := w.cycle().CombinedOutput(); err != nil {
			t.Fatalf("turn: %v\n%s", err, out)
		}
	}
	conf := filepath.Join(w.crawl, "crawl.conf")
	data, _ := os.ReadFile(conf)
	slow := strings.Replace(string(data), "--delay 0 --per-host 2", "--delay 20ms --per-host 1 --workers 3", 1)
	os.WriteFile(conf, []byte(slow), 0o644)
	cmd := w.cycle()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	partial := ""
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		files, _ := filepath.Glob(filepath.Join(w.crawl, "batches", "*", "fetched.0.partial"))
		if len(files) == 1 {
			if st, err := os.Stat(files[0]); err == nil && st.Size() > 2000 {
				partial = files[0]
				break
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	if partial == "" {
		killSession(cmd.Process.Pid)
		t.Fatal("the turn never reached its fetch")
	}
	killSession(cmd.Process.Pid) // every process of the turn, as a crash would
	cmd.Wait()
	if _, err := os.Stat(filepath.Join(filepath.Dir(partial), "DONE")); err == nil {
		t.Fatal("the killed turn finished before the kill")
	}
	// A second run while a (stale) lock file exists: the lock is flock, so it
	// died with the process and the run resumes.
	os.WriteFile(conf, data, 0o644)
	out, err := w.cycle().CombinedOutput()
	if err != nil {
		t.Fatalf("resume: %v\n%s", err, out)
	}
	m := regexp.MustCompile(`\((\d+) from an interrupted run\)`).FindStringSubmatch(string(out))
	if !strings.Contains(string(out), ": resume") || m == nil || m[1] == "0" {
		t.Fatalf("did not resume with the records of the killed run:\n%s", out)
	}
	turns := w.fetchedURLs(t)
	last := turns[len(turns)-1]
	inTurn := map[string]bool{}
	for _, u := range last {
		if inTurn[u] {
			t.Fatalf("the resumed turn fetched %s twice", u)
		}
		inTurn[u] = true
	}
	if len(last) < 50 {
		t.Fatalf("resumed turn has %d records", len(last))
	}
}

// killSession kills every process of the session sid at once. GNU parallel
// starts its jobs in process groups of their own, so killing the script's
// group would leave fetchers running (and holding the turn's lock).
func killSession(sid int) {
	for i := 0; i < 3; i++ {
		dirs, _ := os.ReadDir("/proc")
		for _, d := range dirs {
			pid, err := strconv.Atoi(d.Name())
			if err != nil {
				continue
			}
			if s, err := unix.Getsid(pid); err == nil && s == sid {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestCrawlCycleLock: a turn refuses to start while another holds the lock.
func TestCrawlCycleLock(t *testing.T) {
	w := setup(t)
	os.MkdirAll(w.crawl, 0o755)
	f, err := os.OpenFile(filepath.Join(w.crawl, "lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	out, err := w.cycle().CombinedOutput()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != 75 || !strings.Contains(string(out), "another turn is running") {
		t.Fatalf("with the lock held: %v\n%s", err, out)
	}
}

// TestShardsAgree crawls the same web twice, in one shard and in four under
// GNU parallel, with a last turn two days later so that recrawl has pages
// due: every turn fetches the same URLs, the 50 most important pages and the
// pages recrawl chose are the same.
func TestShardsAgree(t *testing.T) {
	w := setup(t)
	conf, err := os.ReadFile(filepath.Join(w.crawl, "crawl.conf"))
	if err != nil {
		t.Fatal(err)
	}
	later := time.Now().UTC().Add(48 * time.Hour).Format(time.RFC3339)
	run := func(shards int) (turns [][]string, top []string, due [][]string) {
		c := w.fresh(t)
		// No time window: history is then the sum of the cash a page
		// handed on, the same whenever the two runs fetch, so importance
		// can be compared to the last bit. (With a window it scales by the
		// time between fetches, which differs between the two runs;
		// TestShardsReachTheUnshardedState checks the window with fixed
		// times.)
		base := string(conf) + fmt.Sprintf("SHARDS=%d\nRATE=2000\nOPIC_ARGS=\"--window 0\"\n", shards)
		for turn := 1; turn <= 4; turn++ {
			extra := ""
			if turn == 4 {
				extra = "NOW=" + later + "\n"
			}
			os.WriteFile(filepath.Join(c.crawl, "crawl.conf"), []byte(base+extra), 0o644)
			if out, err := c.cycle().CombinedOutput(); err != nil {
				t.Fatalf("%d shards, turn %d: %v\n%s", shards, turn, err, out)
			}
		}
		turns = c.fetchedURLs(t)
		top = c.ranking(t, shards, "--top", "50")
		files, _ := filepath.Glob(filepath.Join(c.crawl, "batches", "*", "due.ndjson"))
		for _, f := range files {
			data, _ := os.ReadFile(f)
			var urls []string
			for _, m := range regexp.MustCompile(`"url":"([^"]*)"`).FindAllStringSubmatch(string(data), -1) {
				urls = append(urls, m[1])
			}
			due = append(due, urls)
		}
		return turns, top, due
	}
	oneTurns, oneTop, oneDue := run(1)
	fourTurns, fourTop, fourDue := run(4)
	if len(oneTurns) != 4 || len(fourTurns) != 4 {
		t.Fatalf("turns: %d and %d", len(oneTurns), len(fourTurns))
	}
	for i := range oneTurns {
		if strings.Join(oneTurns[i], " ") != strings.Join(fourTurns[i], " ") {
			t.Errorf("turn %d fetched %d URLs in one shard, %d in four, not the same", i+1, len(oneTurns[i]), len(fourTurns[i]))
		}
	}
	if len(oneTop) != 50 || strings.Join(oneTop, "\n") != strings.Join(fourTop, "\n") {
		t.Errorf("top 50 differ:\n%s\n\n%s", strings.Join(oneTop, "\n"), strings.Join(fourTop, "\n"))
	}
	if len(oneDue[3]) == 0 {
		t.Errorf("nothing due two days later: the test checks nothing")
	}
	for i := range oneDue {
		if strings.Join(oneDue[i], " ") != strings.Join(fourDue[i], " ") {
			t.Errorf("turn %d: recrawl chose %d pages in one shard, %d in four, not the same", i+1, len(oneDue[i]), len(fourDue[i]))
		}
	}
	total := 0
	for _, u := range oneTurns {
		total += len(u)
	}
	t.Logf("%d records in 4 turns, %d pages due on the last, top page (url, cash, history) %s", total, len(oneDue[3]), oneTop[0])
}

// TestShardedOpicStepResumes fails the sharded opic step midway (one
// shard's update or exchange fails after the other's succeeded) and runs
// the turn again: it completes, and the opic states end with exactly the
// cash and history of a crawl that never failed, so no batch was applied
// twice or lost.
func TestShardedOpicStepResumes(t *testing.T) {
	w := setup(t)
	conf, _ := os.ReadFile(filepath.Join(w.crawl, "crawl.conf"))
	real := w.bin
	crawl := func(failing string) []string {
		c := w.fresh(t)
		// No time window, so that history does not depend on when the
		// crawls fetch (see TestShardsAgree).
		os.WriteFile(filepath.Join(c.crawl, "crawl.conf"), append(conf, "SHARDS=2\nOPIC_ARGS=\"--window 0\"\n"...), 0o644)
		// The tools, with an opic whose second run of the failing command
		// in a turn fails once.
		c.bin = filepath.Join(t.TempDir(), "bin")
		os.MkdirAll(c.bin, 0o755)
		for _, tool := range []string{"fetch", "recrawl", "sekitei", "barrel"} {
			os.Symlink(filepath.Join(real, tool), filepath.Join(c.bin, tool))
		}
		count := filepath.Join(c.crawl, "count")
		wrapper := fmt.Sprintf(`#!/bin/sh
if [ "$1" = "%s" ] && [ -e %[2]s.arm ]; then
  n=$(flock %[2]s.lock sh -c 'echo x >> %[2]s; wc -l < %[2]s')
  if [ "$n" -eq 2 ]; then rm -f %[2]s.arm; echo "opic: injected failure" >&2; exit 1; fi
fi
exec %[3]s "$@"
`, failing, count, filepath.Join(real, "opic"))
		os.WriteFile(filepath.Join(c.bin, "opic"), []byte(wrapper), 0o755)
		for turn := 1; turn <= 3; turn++ {
			if turn == 3 && failing != "" {
				os.WriteFile(count+".arm", nil, 0o644)
				if out, err := c.cycle().CombinedOutput(); err == nil || !strings.Contains(string(out), "injected failure") {
					t.Fatalf("the failing turn: %v\n%s", err, out)
				}
			}
			if out, err := c.cycle().CombinedOutput(); err != nil {
				t.Fatalf("turn %d: %v\n%s", turn, err, out)
			}
		}
		c.bin = real
		return c.ranking(t, 2)
	}
	clean := crawl("")
	for _, failing := range []string{"update", "exchange"} {
		got := crawl(failing)
		if strings.Join(got, "\n") != strings.Join(clean, "\n") {
			t.Errorf("after a failed %s and a rerun: %d pages, cash or history differs from the clean crawl's %d pages", failing, len(got), len(clean))
		}
	}
	if len(clean) < 300 {
		t.Errorf("only %d pages: the test checks little", len(clean))
	}
}

// fresh returns the world with a new, empty crawl directory holding the
// seeds and good URLs.
func (w *world) fresh(t *testing.T) world {
	t.Helper()
	c := *w
	c.crawl = filepath.Join(t.TempDir(), "crawl")
	os.MkdirAll(c.crawl, 0o755)
	for _, f := range []string{"seeds.txt", "good.txt"} {
		copyFile(t, filepath.Join(w.crawl, f), filepath.Join(c.crawl, f))
	}
	return c
}

// ranking returns the crawl's pages by opic importance over the states of
// all its shards (opic show with args), as "url cash history" lines: the
// shards' cash and history are the unsharded state's to the last bit
// (importance is divided by a sum added up in another order).
func (w *world) ranking(t *testing.T, shards int, args ...string) []string {
	t.Helper()
	states, _ := filepath.Glob(filepath.Join(w.crawl, "state", "opic*.state"))
	if len(states) != shards {
		t.Fatalf("%d shards: opic states %v", shards, states)
	}
	args = append([]string{"show", "--tsv"}, args...)
	for _, st := range states {
		args = append(args, "--state", st)
	}
	out, err := exec.Command(filepath.Join(w.bin, "opic"), args...).Output()
	if err != nil {
		t.Fatal(err)
	}
	var pages []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pages = append(pages, strings.Join(strings.Split(line, "\t")[:3], " "))
	}
	return pages
}

// checkLastFilter checks the last turn's sekitei filter against its
// segments: no segment got more candidates than its quota left after the
// pages fetched before, and segments robots.txt refused every time got none.
func (w *world) checkLastFilter(t *testing.T) {
	t.Helper()
	batches, _ := filepath.Glob(filepath.Join(w.crawl, "batches", "*"))
	last := batches[len(batches)-1]
	segs := filepath.Join(w.crawl, "state", "segments.ndjson")
	type rec struct {
		Host    string `json:"host"`
		Segment *int   `json:"segment"`
		Quota   int    `json:"quota"`
		Error   string `json:"error"`
	}
	read := func(data []byte) []rec {
		var out []rec
		for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			var r rec
			if err := json.Unmarshal([]byte(line), &r); err != nil {
				t.Fatalf("%q: %v", line, err)
			}
			out = append(out, r)
		}
		return out
	}
	assign := func(files ...string) []rec {
		out, err := exec.Command(filepath.Join(w.bin, "sekitei"), append([]string{"assign", "--segments", segs}, files...)...).Output()
		if err != nil {
			t.Fatal(err)
		}
		return read(out)
	}
	key := func(r rec) string {
		if r.Segment == nil {
			return r.Host + " -"
		}
		return fmt.Sprintf("%s %d", r.Host, *r.Segment)
	}
	data, _ := os.ReadFile(segs)
	quota := map[string]int{}
	for _, r := range read(data) {
		quota[key(r)] = r.Quota
	}
	history, _ := filepath.Glob(filepath.Join(w.crawl, "state", "history", "*.ndjson"))
	used, refused := map[string]int{}, map[string]int{}
	for _, h := range history[:len(history)-1] { // the turns before the last
		for _, r := range assign(h) {
			used[key(r)]++
			if strings.HasPrefix(r.Error, "robots:") {
				refused[key(r)]++
			}
		}
	}
	admitted := map[string]int{}
	for _, r := range assign(filepath.Join(last, "todo.ndjson")) {
		k := key(r)
		if r.Host == "" {
			t.Errorf("a candidate without a host: the filter cannot find its segment")
		}
		admitted[k]++
		if used[k] >= 5 && refused[k] == used[k] {
			t.Errorf("segment %s: refused by robots.txt in all %d tries, still given candidates", k, used[k])
		}
	}
	blocked := 0
	for k, n := range admitted {
		if q, ok := quota[k]; ok && n > max(q-used[k], 0) {
			t.Errorf("segment %s: %d admitted, quota %d, %d fetched before", k, n, q, used[k])
		}
	}
	for k := range used {
		if used[k] >= 5 && refused[k] == used[k] {
			blocked++
		}
	}
	if len(admitted) == 0 || blocked == 0 {
		t.Errorf("last turn: %d segments admitted, %d blocked by robots.txt: the check checks little", len(admitted), blocked)
	}
}
