// Package e2e tests the tools together: scripts/crawl-cycle.sh over a
// generated web served by nginx on loopback, as cron would run it.
package e2e

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/sekitei/crawlkit/internal/sitegen"
	"github.com/sekitei/crawlkit/pkg/record"
)

// world is a served generated web and a crawl directory for it.
type world struct {
	root, bin, site, crawl string
	env                    []string // extra environment of the loop
}

var (
	buildOnce sync.Once
	builtBin  string
	buildErr  error
)

// tools builds the tools once for all the tests of the package.
func tools(t *testing.T, root string) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "crawlkit-e2e-bin")
		if err != nil {
			buildErr = err
			return
		}
		builtBin = dir
		build := exec.Command("go", "build", "-o", dir+"/", "./cmd/...")
		build.Dir = root
		if out, err := build.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return builtBin
}

func TestMain(m *testing.M) {
	code := m.Run()
	if builtBin != "" {
		os.RemoveAll(builtBin)
	}
	os.Exit(code)
}

func setup(t *testing.T) *world {
	t.Helper()
	return setupWeb(t, []string{"a.test", "b.test", "c.test"})
}

// setupWeb serves a generated web of the given sites.
func setupWeb(t *testing.T, hosts []string) *world {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	w := &world{root: root, bin: tools(t, root), site: filepath.Join(tmp, "site"), crawl: filepath.Join(tmp, "crawl")}
	port := freePort(t)
	cfg := sitegen.Config{Seed: 7, Hosts: hosts, Port: port, Articles: 240, Wiki: 90, PerDay: 10}
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
	w.writeConf(t, "")
	return w
}

// writeConf writes the crawl's crawl.conf: the test web's settings and extra.
// The crawls run at loopback speed (--delay 0), so without the host-rate
// estimates, which start a host new to them at half a request a second
// (TestCrawlCycleHostRates turns them on).
func (w *world) writeConf(t *testing.T, extra string) {
	t.Helper()
	conf := fmt.Sprintf("FETCH_ARGS=\"--allow-private --hosts-file %s/hosts --delay 0 --per-host 2\"\nTURN_N=350\nSITE_QUOTA=200\nMIN_QUOTA=10\nHOST_ESTIMATES=0\n%s", w.site, extra)
	if err := os.WriteFile(filepath.Join(w.crawl, "crawl.conf"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
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
	cmd.Env = append(append(os.Environ(), "CRAWLKIT_BIN="+w.bin), w.env...)
	return cmd
}

// loopbackSite serves on 127.0.0.1 the site that site puts on mux (given
// the site's base URL) for the test's length, and returns a crawl of it
// seeded with its home page, and the base URL.
func loopbackSite(t *testing.T, site func(base string, mux *http.ServeMux)) (*world, string) {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	mux := http.NewServeMux()
	site(base, mux)
	srv := &http.Server{Handler: mux}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	w := &world{root: root, bin: tools(t, root), crawl: filepath.Join(t.TempDir(), "crawl")}
	os.MkdirAll(w.crawl, 0o755)
	if err := os.WriteFile(filepath.Join(w.crawl, "seeds.txt"), []byte(base+"/\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return w, base
}

// dailyTurn runs turn day (1, 2, ...) of a loopbackSite crawl, a day after
// the last, so that every known page is due again, with the extra lines of
// crawl.conf.
func (w *world) dailyTurn(t *testing.T, day int, extra string) {
	t.Helper()
	conf := fmt.Sprintf("FETCH_ARGS=\"--allow-private --delay 0\"\nTURN_N=20\nNOW=2026-11-%02dT00:00:00Z\n%s", 10+day, extra)
	if err := os.WriteFile(filepath.Join(w.crawl, "crawl.conf"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	w.turn(t, fmt.Sprintf("turn %d", day))
}

// turn runs one turn that must complete.
func (w *world) turn(t *testing.T, what string) string {
	t.Helper()
	out, err := w.cycle().CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", what, err, out)
	}
	return string(out)
}

// records reads the records of an NDJSON file.
func records(t *testing.T, path string) []*record.Record {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []*record.Record
	for i, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		if line == "" {
			continue
		}
		r, err := record.Parse([]byte(line))
		if err != nil {
			t.Fatalf("%s: line %d: %v", path, i+1, err)
		}
		out = append(out, r)
	}
	return out
}

// urlsOf returns the urls of the records of a file, in order.
func urlsOf(t *testing.T, path string) []string {
	t.Helper()
	var urls []string
	for _, r := range records(t, path) {
		urls = append(urls, r.URL())
	}
	return urls
}

// perTurn returns the urls of a file of every turn's batch, by turn.
func (w *world) perTurn(t *testing.T, name string) [][]string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(w.crawl, "batches", "*", name))
	var turns [][]string
	for _, f := range files {
		turns = append(turns, urlsOf(t, f))
	}
	return turns
}

func (w *world) fetchedURLs(t *testing.T) [][]string { return w.perTurn(t, "fetched.ndjson") }

func TestCrawlCycle(t *testing.T) {
	w := setup(t)
	for i := 1; i <= 3; i++ {
		w.turn(t, fmt.Sprintf("turn %d", i))
	}
	// Two days later: pages fetched on the first turns are due again and
	// compete with new pages in the one queue.
	w.writeConf(t, "NOW="+time.Now().UTC().Add(48*time.Hour).Format(time.RFC3339)+"\n")
	w.turn(t, "turn 4")
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
	// The last turn's candidates mix pages fetched before and new ones.
	before := map[string]bool{}
	for _, urls := range turns[:3] {
		for _, u := range urls {
			before[u] = true
		}
	}
	cands := w.perTurn(t, "candidates.ndjson")
	again, fresh := 0, 0
	for _, u := range cands[3] {
		if before[u] {
			again++
		} else {
			fresh++
		}
	}
	if again == 0 || fresh == 0 {
		t.Errorf("turn 4 took %d pages fetched before and %d new ones: the queue should mix both", again, fresh)
	}
	// The filter splits the candidates into those fetched and those
	// deferred, and the quotas deferred some.
	deferred := 0
	for i := range cands {
		todo := w.perTurn(t, "todo.ndjson")[i]
		def := w.perTurn(t, "deferred.ndjson")[i]
		deferred += len(def)
		both := append(slices.Clone(todo), def...)
		slices.Sort(both)
		c := slices.Clone(cands[i])
		slices.Sort(c)
		if !slices.Equal(both, c) {
			t.Errorf("turn %d: %d fetched + %d deferred are not the %d candidates", i+1, len(todo), len(def), len(cands[i]))
		}
	}
	if deferred == 0 {
		t.Errorf("the quotas deferred no candidate in 4 turns: the filter checks nothing")
	}
	// Every part of the loop left its product.
	for _, p := range []string{"state/shards", "state/seeded", "index", "logs/cycle.log"} {
		if _, err := os.Stat(filepath.Join(w.crawl, p)); err != nil {
			t.Errorf("%s missing: %v", p, err)
		}
	}
	for _, glob := range []string{"state/opic*", "state/recrawl*", "state/sekitei*", "state/history/*.ndjson.gz"} {
		if m, _ := filepath.Glob(filepath.Join(w.crawl, glob)); len(m) == 0 {
			t.Errorf("no %s", glob)
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
	for i := 0; i < 2; i++ {
		w.turn(t, "turn")
	}
	w.writeConf(t, "FETCH_ARGS=\"--allow-private --hosts-file "+w.site+"/hosts --delay 20ms --per-host 1 --workers 3\"\n")
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
	w.writeConf(t, "")
	out := w.turn(t, "resume")
	m := regexp.MustCompile(`resumed: (\d+) URLs already recorded`).FindStringSubmatch(out)
	if !strings.Contains(out, ": resume") || m == nil || m[1] == "0" {
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

// killSession kills every process of the session sid at once, as a crash
// or `kill -9` of a cron job's process group would.
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

// TestKillingTheGroupKillsTheFetchers: a cron job killed by its process
// group leaves no fetcher behind holding the lock, with shards too.
func TestKillingTheGroupKillsTheFetchers(t *testing.T) {
	w := setup(t)
	w.turn(t, "turn 1")
	w.writeConf(t, "SHARDS=1\nFETCH_ARGS=\"--allow-private --hosts-file "+w.site+"/hosts --delay 50ms --per-host 1 --workers 2\"\n")
	cmd := w.cycle()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if files, _ := filepath.Glob(filepath.Join(w.crawl, "batches", "*", "fetched.0.partial")); len(files) == 1 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	cmd.Wait()
	time.Sleep(200 * time.Millisecond)
	// The lock is free at once: the next turn starts (and resumes).
	w.writeConf(t, "")
	out := w.turn(t, "the turn after the kill")
	if !strings.Contains(out, ": resume") {
		t.Fatalf("no resume after the kill:\n%s", out)
	}
}

// TestCrawlCycleLock: a turn refuses to start while another holds the lock.
func TestCrawlCycleLock(t *testing.T) {
	w := setup(t)
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

// TestShardsAgree crawls the same web twice, in one shard and in four, with
// a last turn two days later so that pages are due again: every turn takes
// the same candidates and fetches the same URLs, and the 50 most important
// pages are the same, cash and history to the last bit.
func TestShardsAgree(t *testing.T) {
	w := setup(t)
	// Every turn at a fixed time, the last two days later: the loop counts a
	// turn's fetches at the turn's time, so the two crawls see the same
	// ages however long their fetches took.
	start := time.Now().UTC().Truncate(time.Hour)
	turnTime := []time.Duration{0, time.Hour, 2 * time.Hour, 50 * time.Hour}
	run := func(shards int) (turns, cands [][]string, top []string) {
		c := w.fresh(t)
		// No time window: history is then the sum of the cash a page
		// handed on, the same whenever the two runs fetch, so importance
		// can be compared to the last bit.
		base := fmt.Sprintf("SHARDS=%d\nRATE=2000\nOPIC_ARGS=\"--window 0\"\n", shards)
		for turn := 1; turn <= 4; turn++ {
			c.writeConf(t, base+"NOW="+start.Add(turnTime[turn-1]).Format(time.RFC3339)+"\n")
			c.turn(t, fmt.Sprintf("%d shards, turn %d", shards, turn))
		}
		return c.fetchedURLs(t), c.perTurn(t, "candidates.ndjson"), c.ranking(t, shards, "--top", "50")
	}
	oneTurns, oneCands, oneTop := run(1)
	fourTurns, fourCands, fourTop := run(4)
	if len(oneTurns) != 4 || len(fourTurns) != 4 {
		t.Fatalf("turns: %d and %d", len(oneTurns), len(fourTurns))
	}
	for i := range oneTurns {
		if !slices.Equal(oneCands[i], fourCands[i]) {
			t.Errorf("turn %d: %d candidates in one shard, %d in four, not the same", i+1, len(oneCands[i]), len(fourCands[i]))
		}
		if !slices.Equal(oneTurns[i], fourTurns[i]) {
			t.Errorf("turn %d fetched %d URLs in one shard, %d in four, not the same", i+1, len(oneTurns[i]), len(fourTurns[i]))
		}
	}
	if len(oneTop) != 50 || !slices.Equal(oneTop, fourTop) {
		t.Errorf("top 50 differ:\n%s\n\n%s", strings.Join(oneTop, "\n"), strings.Join(fourTop, "\n"))
	}
}

// TestShardedOpicStepResumes fails the sharded opic step midway (one
// shard's update or exchange fails after the other's succeeded) and runs
// the turn again: it completes, and the opic states end with exactly the
// cash and history of a crawl that never failed, so no batch was applied
// twice or lost.
func TestShardedOpicStepResumes(t *testing.T) {
	w := setup(t)
	real := w.bin
	crawl := func(failing string) []string {
		c := w.fresh(t)
		c.writeConf(t, "SHARDS=2\nOPIC_ARGS=\"--window 0\"\n")
		// The tools, with an opic whose second run of the failing command
		// in a turn fails once.
		count := filepath.Join(c.crawl, "count")
		c.bin = wrapTool(t, real, "opic", fmt.Sprintf(`#!/bin/sh
if [ "$1" = "%s" ] && [ -e %[2]s.arm ]; then
  n=$(flock %[2]s.lock sh -c 'echo x >> %[2]s; wc -l < %[2]s')
  if [ "$n" -eq 2 ]; then rm -f %[2]s.arm; echo "opic: injected failure" >&2; exit 1; fi
fi
exec %[3]s "$@"
`, failing, count, filepath.Join(real, "opic")))
		for turn := 1; turn <= 3; turn++ {
			if turn == 3 && failing != "" {
				os.WriteFile(count+".arm", nil, 0o644)
				out, err := c.cycle().CombinedOutput()
				if err == nil || !strings.Contains(string(out), "injected failure") {
					t.Fatalf("the failing turn: %v\n%s", err, out)
				}
				log, _ := os.ReadFile(filepath.Join(c.crawl, "logs", "cycle.log"))
				if !strings.Contains(string(log), "opic: failed (exit 1)") || !strings.Contains(string(log), "injected failure") {
					t.Fatalf("the failure is not in cycle.log:\n%s", log)
				}
			}
			c.turn(t, fmt.Sprintf("turn %d", turn))
		}
		c.bin = real
		return c.ranking(t, 2)
	}
	clean := crawl("")
	for _, failing := range []string{"update", "exchange"} {
		got := crawl(failing)
		if !slices.Equal(got, clean) {
			t.Errorf("after a failed %s and a rerun: %d pages, cash or history differs from the clean crawl's %d pages", failing, len(got), len(clean))
		}
	}
	if len(clean) < 300 {
		t.Errorf("only %d pages: the test checks little", len(clean))
	}
}

// fresh returns the world with a new, empty crawl directory holding the
// seeds and good URLs.
// wrapTool returns a directory holding the tools of the directory real,
// with tool replaced by the shell script: a test's way to make one tool
// fail on cue.
func wrapTool(t *testing.T, real, tool, script string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "bin")
	entries, err := os.ReadDir(real)
	if err == nil {
		err = os.MkdirAll(bin, 0o755)
	}
	for _, e := range entries {
		if err == nil && e.Name() != tool {
			err = os.Symlink(filepath.Join(real, e.Name()), filepath.Join(bin, e.Name()))
		}
	}
	if err == nil {
		err = os.WriteFile(filepath.Join(bin, tool), []byte(script), 0o755)
	}
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

func (w *world) fresh(t *testing.T) *world {
	t.Helper()
	c := *w
	c.crawl = filepath.Join(t.TempDir(), "crawl")
	os.MkdirAll(c.crawl, 0o755)
	for _, f := range []string{"seeds.txt", "good.txt"} {
		copyFile(t, filepath.Join(w.crawl, f), filepath.Join(c.crawl, f))
	}
	return &c
}

// opicStates returns the crawl's opic states, one a shard.
func (w *world) opicStates(t *testing.T) []string {
	states, _ := filepath.Glob(filepath.Join(w.crawl, "state", "opic*.db"))
	return states
}

// ranking returns the crawl's pages by opic importance over the states of
// all its shards (opic show with args), as "url cash history" lines: the
// shards' cash and history are the unsharded state's to the last bit
// (importance is divided by a sum added up in another order).
func (w *world) ranking(t *testing.T, shards int, args ...string) []string {
	t.Helper()
	states := w.opicStates(t)
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

// With good.txt and no SITE_QUOTA in crawl.conf, the loop turns the site
// quota on (sekitei's state is built); without good.txt it stays off.
func TestSiteQuotaDefaultFollowsGoodURLs(t *testing.T) {
	w := setup(t)
	conf := fmt.Sprintf("HOST_ESTIMATES=0\nFETCH_ARGS=\"--allow-private --hosts-file %s/hosts --delay 0 --per-host 2\"\nTURN_N=60\n", w.site)
	if err := os.WriteFile(filepath.Join(w.crawl, "crawl.conf"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	w.turn(t, "turn with good.txt")
	if _, err := os.Stat(filepath.Join(w.crawl, "state", "sekitei.db")); err != nil {
		t.Errorf("good.txt given, no SITE_QUOTA: the quota is off (%v)", err)
	}

	os.RemoveAll(filepath.Join(w.crawl, "state"))
	os.RemoveAll(filepath.Join(w.crawl, "batches"))
	os.Remove(filepath.Join(w.crawl, "good.txt"))
	w.turn(t, "turn without good.txt")
	if _, err := os.Stat(filepath.Join(w.crawl, "state", "sekitei.db")); !os.IsNotExist(err) {
		t.Errorf("no good.txt: the quota is on (%v)", err)
	}
}

// TestCrawlCycleHostRates runs two turns with the host-rate estimates on:
// fetch keeps them in state/host-rates.json, the second turn gives them to
// recrawl as each host's limit (batch host-rates.0.tsv), and recrawl report
// shows them for the crawl directory.
func TestCrawlCycleHostRates(t *testing.T) {
	w := setup(t)
	w.writeConf(t, "HOST_ESTIMATES=1\nTURN_N=30\n")
	w.turn(t, "turn 1")
	st := filepath.Join(w.crawl, "state", "host-rates.json")
	data, err := os.ReadFile(st)
	if err != nil {
		t.Fatal(err)
	}
	// The seeds are a.test's: the hosts fetched in turn 1.
	if !strings.Contains(string(data), `"a.test:`) {
		t.Errorf("%s has no a.test:\n%s", st, data)
	}
	w.turn(t, "turn 2")
	limits, err := filepath.Glob(filepath.Join(w.crawl, "batches", "000002-*", "host-rates.0.tsv"))
	if err != nil || len(limits) != 1 {
		t.Fatalf("turn 2 wrote no host limits for recrawl: %v %v", limits, err)
	}
	data, err = os.ReadFile(limits[0])
	if err != nil {
		t.Fatal(err)
	}
	// Keyed as recrawl keys hosts (host:port), in crawls a day.
	if !regexp.MustCompile(`(?m)^a\.test:\d+\t[0-9.e+]+$`).Match(data) {
		t.Errorf("%s: no limit for a.test:\n%s", limits[0], data)
	}
	rep := exec.Command(filepath.Join(w.bin, "recrawl"), "report", "--state", filepath.Join(w.crawl, "state", "recrawl.db"),
		"--host-rates", st, "--good", filepath.Join(w.crawl, "good.txt"), "--html", filepath.Join(w.crawl, "report.html"))
	out, err := rep.CombinedOutput()
	if err != nil {
		t.Fatalf("recrawl report: %v\n%s", err, out)
	}
	for _, want := range []string{"QLinks:", "k_i/day", "000002-"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	if _, err := os.Stat(filepath.Join(w.crawl, "report.html")); err != nil {
		t.Error(err)
	}
}
