package crashtest

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/sekitei/crawlkit/internal/testreport"
	"github.com/sekitei/crawlkit/pkg/record"
	"github.com/sekitei/crawlkit/pkg/warc"
)

// The kill campaign: a crawl of several turns of scripts/crawl-cycle.sh over
// a loopback site, whose turns are killed with kill -9 of the whole process
// group (as cron's job is) at seeded random moments and right after each
// step is done, and run again after each kill; and the same crawl on a
// tmpfs that fills up. Then every invariant is checked against the
// server's own count of requests, the WARC files, the states, the index
// and a crawl of the same turns never killed.
//
// What must be equal to the crawl never killed: each turn fetches the same
// URLs (a turn's candidates are chosen once, by its select step, and a
// resumed turn fetches what its fetch left), so the index holds the same
// pages and every query answers byte for byte the same.

const (
	campaignPages   = 200
	campaignTurns   = 6
	campaignTurnN   = 45
	campaignWorkers = 4
)

// campaignSteps are the loop's steps in the campaign's crawl, in order.
var campaignSteps = []string{"seed", "select", "filter", "fetch", "sitemaps", "opic", "recrawl", "sekitei", "index", "archive"}

var campaignWords = strings.Fields(`amber basalt cedar delta ember fjord garnet harbor indigo juniper kelp lagoon
	meadow nectar obsidian pebble quartz raven saffron tundra umber violet willow xenon yarrow zephyr
	anchor bramble cobalt dune estuary fern glacier heron iris jasper`)

// campaignSite serves a site of campaignPages linked pages on loopback and
// counts every request by path: the server's own access log.
type campaignSite struct {
	base string
	mu   sync.Mutex
	hits map[string]int
}

func newCampaignSite(t *testing.T) *campaignSite {
	t.Helper()
	s := &campaignSite{hits: map[string]int{}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.base = "http://" + ln.Addr().String()
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		s.mu.Lock()
		s.hits[r.URL.Path]++
		s.mu.Unlock()
		// A page takes 10 to 30 ms, so that kills land inside fetches.
		time.Sleep(time.Duration(10+len(r.URL.Path)*3+int(r.URL.Path[len(r.URL.Path)-1])%10) * time.Millisecond)
		var links []int
		title := "Home"
		n := -1
		if r.URL.Path == "/" {
			for i := range 30 {
				links = append(links, i*5)
			}
		} else if v, err := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/p/")); err == nil && strings.HasPrefix(r.URL.Path, "/p/") && v >= 0 && v < campaignPages {
			n = v
			for _, k := range []int{1, 7, 11, 13, 17, 19} {
				links = append(links, (n*k+k+1)%campaignPages)
			}
		} else {
			http.NotFound(w, r)
			return
		}
		rng := rand.New(rand.NewPCG(uint64(n+1), 7))
		var body strings.Builder
		if n >= 0 {
			title = fmt.Sprintf("Page %d %s", n, campaignWords[n%len(campaignWords)])
		}
		fmt.Fprintf(&body, "<html><head><title>%s</title></head><body><h1>%s</h1><p>", title, title)
		for range 40 {
			body.WriteString(campaignWords[rng.IntN(len(campaignWords))] + " ")
		}
		body.WriteString("</p>")
		for _, l := range links {
			fmt.Fprintf(&body, `<a href="/p/%d">%s</a> `, l, campaignWords[l%len(campaignWords)])
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, body.String()+"</body></html>")
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return s
}

// take returns the requests by path since the last take and starts again.
func (s *campaignSite) take() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.hits
	s.hits = map[string]int{}
	return m
}

// campaign is one crawl of the campaign site.
type campaign struct {
	*world
	site  *campaignSite
	marks string // the step hook's files
	// what happened
	runs, kills, boundaryKills, fetchInterrupts, survivors int
	interruption                                           string // what kills counts, "kills" unless set
	killedAfter                                            map[string]int
}

func (s *campaignSite) crawl(t *testing.T, crawlDir string) *campaign {
	t.Helper()
	root, err := filepath.Abs("../..")
	noErr(t, err)
	c := &campaign{world: &world{root: root, bin: tools(t, root), crawl: crawlDir}, site: s, killedAfter: map[string]int{}}
	noErr(t, os.MkdirAll(crawlDir, 0o755))
	noErr(t, os.WriteFile(filepath.Join(crawlDir, "seeds.txt"), []byte(s.base+"/\n"), 0o644))
	var good strings.Builder
	for i := range 10 {
		fmt.Fprintf(&good, "%s/p/%d\n", s.base, i*3)
	}
	noErr(t, os.WriteFile(filepath.Join(crawlDir, "good.txt"), []byte(good.String()), 0o644))
	// The hook of the loop's steps (CRAWLKIT_TEST_STEP_HOOK): while "arm"
	// exists, the first step done says so and holds the turn there.
	c.marks = t.TempDir()
	hook := filepath.Join(c.marks, "hook")
	noErr(t, os.WriteFile(hook, []byte(fmt.Sprintf(`#!/bin/sh
if [ -e %[1]s/arm ]; then rm -f %[1]s/arm; echo "$1" > %[1]s/reached.tmp; mv %[1]s/reached.tmp %[1]s/reached; exec sleep 120; fi
`, c.marks)), 0o755))
	c.env = append(c.env, "CRAWLKIT_TEST_STEP_HOOK="+hook)
	return c
}

// conf writes crawl.conf for logical turn n (1, 2, ...): a day apart, so
// that pages fetched before are due again.
func (c *campaign) conf(t *testing.T, n int) {
	t.Helper()
	conf := fmt.Sprintf("FETCH_ARGS=\"--allow-private --delay 0 --per-host %d --workers %d\"\nTURN_N=%d\nSITE_QUOTA=1000\nMIN_QUOTA=10\nHOST_ESTIMATES=0\nOPIC_ARGS=\"--window 0\"\nNOW=2026-11-%02dT00:00:00Z\n",
		campaignWorkers, campaignWorkers, campaignTurnN, 10+n)
	noErr(t, os.WriteFile(filepath.Join(c.crawl, "crawl.conf"), []byte(conf), 0o644))
}

// doneTurns is the number of turns complete.
func (c *campaign) doneTurns() int {
	m, _ := filepath.Glob(filepath.Join(c.crawl, "batches", "*", "DONE"))
	return len(m)
}

// currentBatch is the newest turn's directory.
func (c *campaign) currentBatch() string {
	m, _ := filepath.Glob(filepath.Join(c.crawl, "batches", "[0-9]*"))
	slices.Sort(m)
	if len(m) == 0 {
		return ""
	}
	return m[len(m)-1]
}

// turnSurvivors lists the processes carrying the token of a turn whose
// shell had PID pid (CRAWLKIT_TURN=PID-..., the watchdog's mark).
func turnSurvivors(pid int) []string {
	var found []string
	want := []byte(fmt.Sprintf("CRAWLKIT_TURN=%d-", pid))
	envs, _ := filepath.Glob("/proc/[0-9]*/environ")
	for _, e := range envs {
		data, err := os.ReadFile(e)
		if err != nil {
			continue
		}
		for _, kv := range strings.Split(string(data), "\x00") {
			if strings.HasPrefix(kv, string(want)) {
				cmdline, _ := os.ReadFile(strings.TrimSuffix(e, "environ") + "cmdline")
				found = append(found, strings.TrimPrefix(strings.TrimSuffix(e, "/environ"), "/proc/")+" "+strings.ReplaceAll(string(cmdline), "\x00", " "))
				break
			}
		}
	}
	return found
}

// run runs the loop once. With boundary, the turn is killed right after the
// next step it finishes; else after wait, unless it ends first, or with
// inFetch, wait after its fetch step started. It returns
// whether the turn completed (exit 0), and fails the test on any other
// exit than by the kill.
func (c *campaign) run(t *testing.T, boundary bool, wait time.Duration, fetching ...bool) bool {
	t.Helper()
	c.runs++
	arm := filepath.Join(c.marks, "arm")
	reached := filepath.Join(c.marks, "reached")
	os.Remove(reached)
	if boundary {
		noErr(t, os.WriteFile(arm, nil, 0o644))
	} else {
		os.Remove(arm)
	}
	cmd := c.cycle()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	noErr(t, cmd.Start())
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	var timer <-chan time.Time
	if !boundary && len(fetching) == 0 {
		timer = time.After(wait)
	}
	step := ""
	for step == "" {
		select {
		case err := <-exited:
			os.Remove(arm)
			if err != nil {
				t.Fatalf("turn run %d: %v\n%s\nlog:\n%s", c.runs, err, out.String(), lastLines(c.log(t), 30))
			}
			return true
		case <-timer:
			step = "-"
		case <-time.After(2 * time.Millisecond):
			if data, err := os.ReadFile(reached); err == nil {
				step = strings.TrimSpace(string(data))
			}
			if timer == nil && !boundary && fileExists(filepath.Join(c.currentBatch(), "fetch.err")) {
				timer = time.After(wait)
			}
		}
	}
	batch := c.currentBatch()
	noErr(t, syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL))
	err := <-exited
	var ws syscall.WaitStatus
	if st, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok {
		ws = st
	}
	if err == nil || !ws.Signaled() {
		// The turn ended just before the kill.
		if err != nil {
			t.Fatalf("turn run %d: %v\n%s", c.runs, err, out.String())
		}
		return true
	}
	c.kills++
	if fileExists(filepath.Join(batch, "DONE")) {
		return true // the kill landed once the turn's work was done
	}
	if step != "-" {
		c.boundaryKills++
		c.killedAfter[step]++
	}
	if inFetch(batch) {
		c.fetchInterrupts++
	}
	// What the kill of the group did not reach, the watchdog ends.
	var left []string
	for start := time.Now(); time.Since(start) < 20*time.Second; time.Sleep(50 * time.Millisecond) {
		if left = turnSurvivors(cmd.Process.Pid); len(left) == 0 {
			break
		}
	}
	if len(left) > 0 {
		c.survivors += len(left)
		t.Errorf("20 s after kill %d, still running:\n%s", c.kills, strings.Join(left, "\n"))
	}
	return false
}

// inFetch tells whether an interrupted turn can have been in its fetch:
// the step before it done, fetch not (a bound: a full disk may have kept
// the step from leaving its own marks).
func inFetch(batch string) bool {
	return fileExists(filepath.Join(batch, "filter.done")) && !fileExists(filepath.Join(batch, "fetch.done"))
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// checkStates opens every state and the index with its tool's reader.
func (c *campaign) checkStates(t *testing.T) {
	t.Helper()
	st := filepath.Join(c.crawl, "state")
	for _, check := range [][]string{
		{"opic", "show", "--state", filepath.Join(st, "opic.db"), "--top", "3"},
		{"recrawl", "report", "--state", filepath.Join(st, "recrawl.db"), "--now", "2026-11-30T00:00:00Z"},
		{"sekitei", "state", "--state", filepath.Join(st, "sekitei.db")},
		{"barrel", "stats", "--index", filepath.Join(c.crawl, "index"), "--verify"},
	} {
		if _, err := os.Stat(check[3]); errors.Is(err, os.ErrNotExist) && c.doneTurns() == 0 {
			continue
		}
		if out, err := exec.Command(filepath.Join(c.bin, check[0]), check[1:]...).CombinedOutput(); err != nil {
			t.Errorf("%s: %v\n%s", strings.Join(check, " "), err, lastLines(string(out), 10))
		}
	}
}

// answers runs the queries on the crawl's index.
func (c *campaign) answers(t *testing.T, queries string) string {
	t.Helper()
	out, err := exec.Command(filepath.Join(c.bin, "barrel"), "search", "--index", filepath.Join(c.crawl, "index"), "--n", "10", "--queries", queries).Output()
	if err != nil {
		t.Fatalf("barrel search: %v", err)
	}
	return string(out)
}

// verify checks the crawl against the crawl never killed (its fetched URLs
// by turn and its answers) and the requests the server counted, and
// returns the requests made beyond one a URL and turn, and the orphan WARC
// responses and records without a response.
func (c *campaign) verify(t *testing.T, hits map[string]int, want [][]string, wantAnswers, queries string) (extra, orphans, dangling int) {
	t.Helper()
	got := c.fetchedURLs(t)
	if len(got) != len(want) {
		t.Fatalf("%d turns, want %d", len(got), len(want))
	}
	records := map[string]int{}
	var journal strings.Builder
	for i := range want {
		s := slices.Clone(got[i])
		slices.Sort(s)
		if len(slices.Compact(s)) != len(got[i]) {
			t.Errorf("turn %d recorded a URL twice", i+1)
		}
		if !slices.Equal(want[i], got[i]) {
			t.Errorf("turn %d: %d URLs fetched, the crawl never killed fetched %d, not the same: only here %v, only there %v", i+1, len(got[i]), len(want[i]), firstMissing(got[i], want[i]), firstMissing(want[i], got[i]))
		}
		for _, u := range got[i] {
			records[strings.TrimPrefix(u, c.site.base)]++
		}
	}
	files, _ := filepath.Glob(filepath.Join(c.crawl, "batches", "*", "fetched.ndjson"))
	for _, f := range files {
		journal.WriteString(readFile(t, f))
	}
	for path, n := range hits {
		if n > records[path] {
			extra += n - records[path]
		}
	}
	for path, n := range records {
		if hits[path] < n {
			t.Errorf("%s: %d records, %d requests", path, n, hits[path])
		}
	}
	orphans, dangling = warcPairs(t, journal.String(), filepath.Join(c.crawl, "warc"))
	c.checkStates(t)
	c.checkCrawlFiles(t)
	if a := c.answers(t, queries); a != wantAnswers {
		t.Errorf("the answers differ from the crawl never killed's (%d and %d bytes)", len(a), len(wantAnswers))
	}
	return extra, orphans, dangling
}

// TestKillCampaign runs the kill campaign (see above); the seed is
// CRAWLKIT_KILL_SEED, else 32. It prints one summary line a crawl: kills,
// extra requests, orphan WARC records, survivors.
func TestKillCampaign(t *testing.T) {
	seed := uint64(32)
	if s := os.Getenv("CRAWLKIT_KILL_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		noErr(t, err)
		seed = v
	}
	t.Logf("seed %d (CRAWLKIT_KILL_SEED)", seed)
	rng := rand.New(rand.NewPCG(seed, 32))
	site := newCampaignSite(t)

	// The crawl never killed.
	ref := site.crawl(t, filepath.Join(t.TempDir(), "crawl"))
	var took time.Duration
	for n := 1; n <= campaignTurns; n++ {
		ref.conf(t, n)
		t0 := time.Now()
		if !ref.run(t, false, time.Hour) {
			t.Fatal("the reference turn was killed")
		}
		took += time.Since(t0)
	}
	refHits := site.take()
	want := ref.fetchedURLs(t)
	queries := filepath.Join(t.TempDir(), "queries")
	var q strings.Builder
	for i, w := range campaignWords {
		fmt.Fprintf(&q, "%s\n%s %s\n", w, w, campaignWords[(i*7+3)%len(campaignWords)])
	}
	noErr(t, os.WriteFile(queries, []byte(q.String()), 0o644))
	wantAnswers := ref.answers(t, queries)
	if strings.Count(wantAnswers, site.base) < 100 {
		t.Fatalf("the queries find little:\n%s", wantAnswers)
	}
	extra, orphans, dangling := ref.verify(t, refHits, want, wantAnswers, queries)
	if extra != 0 || orphans != 0 || dangling != 0 {
		t.Fatalf("the crawl never killed: %d extra requests, %d orphan responses, %d records without one", extra, orphans, dangling)
	}
	turnTime := took / campaignTurns
	t.Logf("the crawl never killed: %d turns, %d requests, a turn in %v", campaignTurns, sum(refHits), turnTime.Round(time.Millisecond))

	t.Run("kill", func(t *testing.T) {
		start := time.Now()
		c := site.crawl(t, filepath.Join(t.TempDir(), "crawl"))
		for n := 1; n <= campaignTurns; n++ {
			c.conf(t, n)
			// Odd turns: a kill right after every step the turn finishes.
			// Even turns: kills at random moments, of the turn or of its
			// fetch, until the turn completes (at most 10), then after
			// every step left.
			done := false
			for k := 0; n%2 == 0 && !done && k < 10; k++ {
				if k%2 == 0 {
					done = c.run(t, false, time.Duration(rng.Int64N(int64(turnTime))))
				} else {
					done = c.run(t, false, time.Duration(rng.Int64N(int64(300*time.Millisecond))), true)
				}
			}
			for !done {
				done = c.run(t, true, 0)
			}
			if c.doneTurns() != n {
				t.Fatalf("turn %d: %d turns done", n, c.doneTurns())
			}
		}
		c.summary(t, site.take(), want, wantAnswers, queries, start)
		for _, s := range campaignSteps {
			if c.killedAfter[s] == 0 {
				t.Errorf("no kill right after step %s", s)
			}
		}
		if c.kills < 30 {
			t.Errorf("%d kills, want at least 30", c.kills)
		}
	})

	t.Run("diskfull", func(t *testing.T) {
		start := time.Now()
		mnt := t.TempDir()
		if err := unix.Mount("tmpfs", mnt, "tmpfs", 0, "size=64m"); err != nil {
			t.Fatalf("mount tmpfs (the tests run as root): %v", err)
		}
		t.Cleanup(func() { unix.Unmount(mnt, unix.MNT_DETACH) })
		c := site.crawl(t, filepath.Join(mnt, "crawl"))
		full := 0
		for n := 1; n <= campaignTurns; n++ {
			c.conf(t, n)
			// Turns after the first start with room for a part of the turn
			// only: it fails, leaving every state as it was or as its step
			// made it, and completes once there is room again.
			for _, room := range []int{8 << 10, 64 << 10, 256 << 10} {
				if n == 1 {
					break
				}
				before := c.stateHashes(t)
				var st unix.Statfs_t
				noErr(t, unix.Statfs(mnt, &st))
				used := (st.Blocks - st.Bfree) * uint64(st.Bsize)
				noErr(t, unix.Mount("tmpfs", mnt, "tmpfs", unix.MS_REMOUNT, fmt.Sprintf("size=%d", used+uint64(room))))
				cmd := c.cycle()
				cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
				code, out := exitOf(t, cmd)
				noErr(t, unix.Mount("tmpfs", mnt, "tmpfs", unix.MS_REMOUNT, "size=64m"))
				c.runs++
				if code == 0 {
					break // the rest of the turn fitted
				}
				full++
				if code != 1 || !strings.Contains(strings.ToLower(out), "no space left on device") {
					t.Fatalf("turn %d with %d bytes of room: exit %d, want 1 saying the disk is full:\n%s", n, room, code, lastLines(out, 20))
				}
				batch := c.currentBatch()
				if inFetch(batch) {
					c.fetchInterrupts++
				}
				if left := turnSurvivors(cmd.Process.Pid); len(left) > 0 {
					c.survivors += len(left)
					t.Errorf("after a full disk, still running:\n%s", strings.Join(left, "\n"))
				}
				t.Logf("turn %d, %d bytes of room: %s", n, room, lastLine(c.log(t), ": failed"))
				c.lastGood(t, before, batch)
				c.checkStates(t)
			}
			if c.doneTurns() < n && !c.run(t, false, time.Hour) {
				t.Fatal("killed")
			}
		}
		if full < 3 {
			t.Errorf("%d turns failed on a full disk, want at least 3", full)
		}
		c.kills = full
		c.interruption = "turns failed on a full disk"
		c.summary(t, site.take(), want, wantAnswers, queries, start)
	})
}

// summary checks the crawl and prints the campaign's line.
func (c *campaign) summary(t *testing.T, hits map[string]int, want [][]string, wantAnswers, queries string, start time.Time) {
	t.Helper()
	extra, orphans, dangling := c.verify(t, hits, want, wantAnswers, queries)
	bound := c.fetchInterrupts * campaignWorkers
	beyond := max(0, extra-bound)
	what := c.interruption
	if what == "" {
		what = "kills"
	}
	testreport.Logf(t, "kill campaign: %d turns, %d runs, %d %s (%d after a step, %d in a fetch), extra requests %d (in-flight bound %d: %d beyond), orphan WARC responses %d, records without a response %d, survivors %d, %v",
		campaignTurns, c.runs, c.kills, what, c.boundaryKills, c.fetchInterrupts, extra, bound, beyond, orphans, dangling, c.survivors, time.Since(start).Round(time.Second))
	if beyond != 0 || orphans != 0 || dangling != 0 || c.survivors != 0 {
		t.Errorf("extra requests beyond those in flight %d, orphan WARC responses %d, records without a response %d, survivors %d: want 0 each", beyond, orphans, dangling, c.survivors)
	}
}

// stateHashes digests the crawl's states and index manifest.
func (c *campaign) stateHashes(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, f := range []string{"state/opic.db", "state/recrawl.db", "state/sekitei.db", "index/MANIFEST"} {
		if data, err := os.ReadFile(filepath.Join(c.crawl, f)); err == nil {
			out[f] = fmt.Sprintf("%x", sha256.Sum256(data))
		}
	}
	return out
}

// lastGood checks that a turn that failed changed no state but those of
// the steps it finished and of the step that failed (the first not done,
// whose update applies a batch once: run again, it finds it applied).
func (c *campaign) lastGood(t *testing.T, before map[string]string, batch string) {
	t.Helper()
	after := c.stateHashes(t)
	failed := ""
	for _, s := range campaignSteps {
		if !fileExists(filepath.Join(batch, s+".done")) {
			failed = s
			break
		}
	}
	for f, step := range map[string]string{"state/opic.db": "opic", "state/recrawl.db": "recrawl", "state/sekitei.db": "sekitei", "index/MANIFEST": "index"} {
		if after[f] != before[f] && step != failed && !fileExists(filepath.Join(batch, step+".done")) {
			t.Errorf("%s changed in a turn that failed in step %s, before step %s", f, failed, step)
		}
	}
}

// warcPairs matches the records of a crawl (journal, NDJSON) with the WARC
// response and revisit records of its pages in dir (robots.txt's, which
// no record points at, aside): the WARC records no record points at
// (orphans) and the records pointing at none (dangling). A torn or damaged
// WARC file fails the test.
func warcPairs(t *testing.T, journal, dir string) (orphans, dangling int) {
	t.Helper()
	type loc struct {
		file string
		off  int64
	}
	pointed := map[loc]bool{}
	for i, line := range strings.Split(strings.TrimSuffix(journal, "\n"), "\n") {
		if line == "" {
			continue
		}
		rec, err := record.Parse([]byte(line))
		if err != nil {
			t.Fatalf("records line %d: %v", i+1, err)
		}
		if wf, ok := rec.String("warc_file"); ok {
			off, _, _ := rec.Float("warc_offset")
			pointed[loc{filepath.Clean(wf), int64(off)}] = true
		}
	}
	archived := map[loc]string{} // the URL of each response
	files, _ := filepath.Glob(filepath.Join(dir, "*.warc.gz"))
	for _, f := range files {
		eachWARCRecord(t, f, func(rec *warc.Record) {
			if (rec.Type() == warc.TypeResponse || rec.Type() == warc.TypeRevisit) && !strings.HasSuffix(rec.TargetURI(), "/robots.txt") {
				archived[loc{filepath.Clean(f), rec.Offset}] = rec.TargetURI()
			}
		})
	}
	for l, u := range archived {
		if !pointed[l] {
			orphans++
			// What a failure needs to be read: the response, and the
			// records of its URL.
			t.Logf("orphan: %s at %s offset %d; its URL's records: %s", u, filepath.Base(l.file), l.off, recordsOf(journal, u))
		}
	}
	for l := range pointed {
		if _, ok := archived[l]; !ok {
			dangling++
		}
	}
	return orphans, dangling
}

// recordsOf lists the records of journal (NDJSON) for url, each as its
// WARC file and offset and its error.
func recordsOf(journal, url string) string {
	var out []string
	for _, line := range strings.Split(journal, "\n") {
		rec, err := record.Parse([]byte(line))
		if err != nil || strings.TrimSpace(rec.URL()) != url {
			continue
		}
		wf, _ := rec.String("warc_file")
		off, _, _ := rec.Float("warc_offset")
		msg, _ := rec.String("error")
		rc, _, _ := rec.Bool("recovered")
		out = append(out, fmt.Sprintf("[%s %d recovered=%v error=%q]", filepath.Base(wf), int64(off), rc, msg))
	}
	if len(out) == 0 {
		return "none"
	}
	return strings.Join(out, " ")
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}
