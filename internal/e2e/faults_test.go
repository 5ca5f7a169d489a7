package e2e

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/sekitei/crawlkit/internal/boltdamage"
	"github.com/sekitei/crawlkit/pkg/record"
	"github.com/sekitei/crawlkit/pkg/warc"
)

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// exitOf runs cmd and returns its exit status and output.
func exitOf(t *testing.T, cmd *exec.Cmd) (int, string) {
	t.Helper()
	out, err := cmd.CombinedOutput()
	if err == nil {
		return 0, string(out)
	}
	ee, ok := err.(*exec.ExitError)
	if !ok {
		t.Fatalf("%v\n%s", err, out)
	}
	return ee.ExitCode(), string(out)
}

func (w *world) log(t *testing.T) string {
	data, _ := os.ReadFile(filepath.Join(w.crawl, "logs", "cycle.log"))
	return string(data)
}

// checkCrawlFiles checks what a crash must never leave behind: every WARC
// file reads to its end, and every record file of every turn is whole lines
// of valid records.
func (w *world) checkCrawlFiles(t *testing.T) {
	t.Helper()
	warcs, _ := filepath.Glob(filepath.Join(w.crawl, "warc", "*.warc.gz"))
	if len(warcs) == 0 {
		t.Fatal("no WARC files")
	}
	for _, f := range warcs {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		r, err := warc.NewReader(fh)
		if err != nil {
			t.Fatal(err)
		}
		for {
			rec, err := r.Next()
			if err == io.EOF {
				break
			}
			if err == nil {
				_, err = io.Copy(io.Discard, rec.Body)
			}
			if err != nil {
				t.Errorf("%s: %v", f, err)
				break
			}
		}
		fh.Close()
	}
	ndjson, _ := filepath.Glob(filepath.Join(w.crawl, "batches", "*", "*.ndjson"))
	for _, f := range ndjson {
		data, _ := os.ReadFile(f)
		if len(data) > 0 && data[len(data)-1] != '\n' {
			t.Errorf("%s ends in a torn line", f)
		}
		urlsOf(t, f) // every line a record
	}
}

// TestCrawlCycleKilledAnywhere kills every turn of a crawl at random moments
// (the whole session, as a crash would), several times, before letting it
// finish: each turn fetches what the same turn of a crawl never killed
// fetches, no URL twice, and the crawl ends with the same OPIC importance to
// the last bit, so no batch was lost or applied twice. Every WARC file and
// record file stays whole.
func TestCrawlCycleKilledAnywhere(t *testing.T) {
	w := setup(t)
	conf := "TURN_N=100\nOPIC_ARGS=\"--window 0\"\n"
	clean := w.fresh(t)
	clean.writeConf(t, conf)
	for i := 1; i <= 3; i++ {
		clean.turn(t, fmt.Sprintf("clean turn %d", i))
	}

	killed := w.fresh(t)
	killed.writeConf(t, conf)
	// Each turn is killed in some of its steps: once a step has started
	// (its .err file exists), after a random few milliseconds, so that
	// kills land inside tools as well as between them, whatever the speed
	// of the machine.
	steps := []string{"select", "filter", "fetch", "sitemaps", "opic", "recrawl", "sekitei", "index", "archive"}
	rng := rand.New(rand.NewPCG(1, 2))
	kills := 0
	for i := 1; i <= 3; i++ {
		for k := 0; k < 5; k++ {
			target := steps[rng.IntN(len(steps))]
			pause := time.Duration(rng.IntN(80)) * time.Millisecond
			cmd := killed.cycle()
			cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			started := make(chan bool, 1)
			stop := make(chan bool)
			go func() {
				for {
					select {
					case <-stop:
						return
					case <-time.After(5 * time.Millisecond):
					}
					if m, _ := filepath.Glob(filepath.Join(killed.crawl, "batches", fmt.Sprintf("%06d-*", i), target+".err")); len(m) > 0 {
						time.Sleep(pause)
						started <- true
						return
					}
				}
			}()
			select {
			case <-started:
				killSession(cmd.Process.Pid)
				<-done
				if m, _ := filepath.Glob(filepath.Join(killed.crawl, "batches", fmt.Sprintf("%06d-*", i), "DONE")); len(m) == 0 {
					kills++
				}
			case err := <-done:
				close(stop)
				if err != nil {
					t.Fatalf("turn %d ended by itself with %v", i, err)
				}
			}
			if batches, _ := filepath.Glob(filepath.Join(killed.crawl, "batches", "*", "DONE")); len(batches) == i {
				break // the turn finished before the kill
			}
		}
		if batches, _ := filepath.Glob(filepath.Join(killed.crawl, "batches", "*", "DONE")); len(batches) < i {
			killed.turn(t, fmt.Sprintf("turn %d after the kills", i))
		}
	}
	if kills < 6 {
		t.Fatalf("only %d kills landed: the test checks little", kills)
	}
	want, got := clean.fetchedURLs(t), killed.fetchedURLs(t)
	if len(got) != 3 {
		t.Fatalf("%d turns", len(got))
	}
	for i := range want {
		s := slices.Clone(got[i])
		slices.Sort(s)
		if len(slices.Compact(s)) != len(got[i]) {
			t.Errorf("turn %d fetched a URL twice", i+1)
		}
		if !slices.Equal(want[i], got[i]) {
			t.Errorf("turn %d: %d URLs fetched, the crawl never killed fetched %d, not the same", i+1, len(got[i]), len(want[i]))
		}
	}
	if a, b := clean.ranking(t, 1), killed.ranking(t, 1); !slices.Equal(a, b) {
		t.Errorf("opic importance differs from the crawl never killed (%d and %d pages)", len(a), len(b))
	}
	killed.checkCrawlFiles(t)
	t.Logf("%d kills over 3 turns", kills)
}

// TestCrawlCycleDiskFull runs a crawl on a small tmpfs that fills up in the
// middle of a turn, at several points: the turn fails and says so in the
// log; once there is room again the next run completes the turn, and the
// crawl ends as a crawl that never ran out of room does.
func TestCrawlCycleDiskFull(t *testing.T) {
	w := setup(t)
	conf := "TURN_N=100\nOPIC_ARGS=\"--window 0\"\n"
	clean := w.fresh(t)
	clean.writeConf(t, conf)
	for i := 1; i <= 3; i++ {
		clean.turn(t, fmt.Sprintf("clean turn %d", i))
	}
	want := clean.fetchedURLs(t)
	wantRank := clean.ranking(t, 1)
	for _, room := range []int{16 << 10, 200 << 10, 600 << 10} {
		t.Run(fmt.Sprint(room), func(t *testing.T) {
			mnt := t.TempDir()
			if err := unix.Mount("tmpfs", mnt, "tmpfs", 0, "size=64m"); err != nil {
				t.Fatalf("mount tmpfs (the tests run as root): %v", err)
			}
			t.Cleanup(func() { unix.Unmount(mnt, unix.MNT_DETACH) })
			c := *w
			c.crawl = filepath.Join(mnt, "crawl")
			os.MkdirAll(c.crawl, 0o755)
			for _, f := range []string{"seeds.txt", "good.txt"} {
				copyFile(t, filepath.Join(w.crawl, f), filepath.Join(c.crawl, f))
			}
			c.writeConf(t, conf)
			c.turn(t, "turn 1")
			// Leave room for a part of the next turn only.
			var st unix.Statfs_t
			unix.Statfs(mnt, &st)
			used := (st.Blocks - st.Bfree) * uint64(st.Bsize)
			if err := unix.Mount("tmpfs", mnt, "tmpfs", unix.MS_REMOUNT, fmt.Sprintf("size=%d", used+uint64(room))); err != nil {
				t.Fatal(err)
			}
			code, out := exitOf(t, c.cycle())
			if code == 0 {
				t.Fatalf("the turn fitted in %d bytes more: give the test less room\n%s", room, out)
			}
			if code != 1 {
				t.Errorf("a full disk: exit %d; want 1, a failed step (2 is a set-up the loop cannot use)", code)
			}
			if !strings.Contains(out, "no space left on device") && !strings.Contains(out, "No space left on device") {
				t.Errorf("the turn failed (exit %d) without saying the disk is full:\n%s", code, out)
			}
			if !regexp.MustCompile(`: failed \(exit \d+\)`).MatchString(c.log(t)) {
				t.Errorf("cycle.log does not say which step failed:\n%s", c.log(t))
			}
			unix.Mount("tmpfs", mnt, "tmpfs", unix.MS_REMOUNT, "size=64m")
			c.turn(t, "turn 2, resumed with room")
			c.turn(t, "turn 3")
			got := c.fetchedURLs(t)
			for i := range want {
				if !slices.Equal(want[i], got[i]) {
					t.Errorf("turn %d: %d URLs fetched, the crawl with room fetched %d, not the same", i+1, len(got[i]), len(want[i]))
				}
			}
			if r := c.ranking(t, 1); !slices.Equal(r, wantRank) {
				t.Errorf("opic importance differs from the crawl with room (%d and %d pages)", len(r), len(wantRank))
			}
			c.checkCrawlFiles(t)
		})
	}
}

// TestCrawlCycleSaysWhyNoProgress: a crawl whose seeds cannot be fetched
// says so, with the reason, in the log and the exit status, every turn.
func TestCrawlCycleSaysWhyNoProgress(t *testing.T) {
	w := setup(t)
	for _, c := range []struct {
		name, seeds, fetchArgs, reason string
	}{
		{"dns", "http://no-such-host.invalid/\n", "--delay 0", "error:dns"},
		{"private", "http://127.0.0.1:9/\n", "--delay 0", "error:blocked"},
	} {
		t.Run(c.name, func(t *testing.T) {
			x := w.fresh(t)
			os.WriteFile(filepath.Join(x.crawl, "seeds.txt"), []byte(c.seeds), 0o644)
			os.WriteFile(filepath.Join(x.crawl, "crawl.conf"), []byte("FETCH_ARGS=\""+c.fetchArgs+"\"\n"), 0o644)
			code, out := exitOf(t, x.cycle())
			if code != 3 || !strings.Contains(out, "no progress: nothing fetched: none of the 1 URLs tried could be fetched") || !strings.Contains(x.log(t), c.reason) {
				t.Fatalf("exit %d; want 3 and the reason %s in the log:\n%s\nlog:\n%s", code, c.reason, out, x.log(t))
			}
			if hint := strings.Contains(x.log(t), "--allow-private"); hint != (c.name == "private") {
				t.Errorf("the hint at --allow-private is there: %v; want it for a private address alone:\n%s", hint, x.log(t))
			}
			if !strings.Contains(x.log(t), "fetch: "+strings.TrimSpace(c.seeds)+" failed: ") {
				t.Errorf("the seed's failure is not told in a line of its own:\n%s", x.log(t))
			}
			code, out = exitOf(t, x.cycle())
			if code != 3 || !strings.Contains(x.log(t), "no progress: nothing fetched: no page of this crawl has been fetched yet") {
				t.Fatalf("second turn: exit %d\n%s", code, out)
			}
		})
	}
}

// hashTree returns a digest of every file under dir but skip.
func hashTree(t *testing.T, dir, skip string) map[string]string {
	out := map[string]string{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || p == skip {
			return nil
		}
		data, _ := os.ReadFile(p)
		out[p] = fmt.Sprintf("%x", sha256.Sum256(data))
		return nil
	})
	return out
}

// TestCrawlCycleRefusesWhatItCannotUse: tools missing from CRAWLKIT_BIN,
// another number of shards than the crawl was made with, and a corrupt state
// file each stop the turn with a message naming what is wrong, and no good
// file changes.
func TestCrawlCycleRefusesWhatItCannotUse(t *testing.T) {
	w := setup(t)
	w.turn(t, "turn 1")
	w.turn(t, "turn 2")

	x := *w
	x.bin = filepath.Join(t.TempDir(), "nothing-here")
	code, out := exitOf(t, x.cycle())
	if code != 2 || !strings.Contains(out, "has no fetch") {
		t.Errorf("CRAWLKIT_BIN without the tools: exit %d\n%s", code, out)
	}
	if _, err := os.Stat(x.bin); err == nil {
		t.Errorf("the loop made %s", x.bin)
	}

	w.writeConf(t, "SHARDS=3\n")
	code, out = exitOf(t, w.cycle())
	if code != 2 || !strings.Contains(out, "SHARDS must stay the same") {
		t.Errorf("another SHARDS: exit %d\n%s", code, out)
	}
	w.writeConf(t, "")

	states, _ := filepath.Glob(filepath.Join(w.crawl, "state", "recrawl*"))
	if len(states) != 1 {
		t.Fatalf("recrawl states %v", states)
	}
	victim := states[0]
	// 256 bytes inverted around the record of the seed page: a damaged
	// data page that the next turn reads.
	seed := strings.TrimSpace(string(must(os.ReadFile(filepath.Join(w.crawl, "seeds.txt")))))
	boltdamage.Flip("pages", seed, 256).Do(t, victim)
	damaged := must(os.ReadFile(victim))
	// The steps after recrawl's (sekitei's, barrel's) must not run; those
	// before it apply the batch as usual (and apply it once: --batch).
	later := hashTree(t, filepath.Join(w.crawl, "index"), "")
	for p, h := range hashTree(t, filepath.Join(w.crawl, "state"), "") {
		if strings.Contains(p, "sekitei") {
			later[p] = h
		}
	}
	code, out = exitOf(t, w.cycle())
	if code != 1 || !strings.Contains(out, victim+": corrupt") {
		t.Errorf("corrupt %s: exit %d; want 1 and a message naming it\n%s", victim, code, out)
	}
	if !regexp.MustCompile(`(select|recrawl): failed \(exit 1\)`).MatchString(w.log(t)) || !strings.Contains(w.log(t), victim) {
		t.Errorf("the failure and the file are not in cycle.log:\n%s", w.log(t))
	}
	if !bytes.Equal(must(os.ReadFile(victim)), damaged) {
		t.Errorf("the damaged %s was written to", victim)
	}
	now := hashTree(t, filepath.Join(w.crawl, "index"), "")
	for p, h := range hashTree(t, filepath.Join(w.crawl, "state"), "") {
		if strings.Contains(p, "sekitei") {
			now[p] = h
		}
	}
	for p, h := range later {
		if now[p] != h {
			t.Errorf("%s changed although the turn stopped before its step", p)
		}
	}
	// Again: the same stop, nothing applied twice.
	if code, _ := exitOf(t, w.cycle()); code != 1 {
		t.Errorf("the rerun: exit %d", code)
	}
}

// `urlfeat > file` on a disk that fills up fails (exit 1, the reason on
// stderr) and leaves the file ending on a whole record.
func TestUrlfeatDiskFullEndsOnARecord(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	bin := tools(t, root)
	mnt := t.TempDir()
	if err := unix.Mount("tmpfs", mnt, "tmpfs", 0, "size=300k"); err != nil {
		t.Fatalf("mount tmpfs (the tests run as root): %v", err)
	}
	t.Cleanup(func() { unix.Unmount(mnt, unix.MNT_DETACH) })
	out, err := os.Create(filepath.Join(mnt, "features.ndjson"))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	cmd := exec.Command(filepath.Join(bin, "urlfeat"), filepath.Join(root, "testdata/sekitei/urls.lenta.general"))
	cmd.Stdout = out
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err = cmd.Run()
	if code := cmd.ProcessState.ExitCode(); code != 1 || !strings.Contains(stderr.String(), "no space left") {
		t.Fatalf("urlfeat on a full disk: exit %d (%v), stderr %q", code, err, stderr.String())
	}
	data, err := os.ReadFile(out.Name())
	if err != nil {
		t.Fatal(err)
	}
	if len(data) < 100<<10 || data[len(data)-1] != '\n' {
		t.Fatalf("%d bytes written, ending %q", len(data), data[max(0, len(data)-60):])
	}
	for i, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		r, err := record.Parse([]byte(line))
		if err != nil || !r.Has("features") {
			t.Fatalf("line %d: %q: %v", i+1, line, err)
		}
	}
}

// fetch whose WARC directory fills up loses no record: every URL given has
// its record, the one whose WARC write failed with error "warc: ...", the
// rest fetched before it or "interrupted" after it; the run exits 1.
func TestFetchWARCDiskFullLosesNoRecord(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	bin := tools(t, root)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		// About 16 KB of text that gzip cannot shrink much, so the WARC
		// files fill the disk.
		var body strings.Builder
		sum := sha256.Sum256([]byte(r.URL.Path))
		for range 256 {
			sum = sha256.Sum256(sum[:])
			fmt.Fprintf(&body, "%x\n", sum)
		}
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, "<html><head><title>%s</title></head><body><pre>%s</pre></body></html>", r.URL.Path, body.String())
	}))
	defer srv.Close()
	mnt := t.TempDir()
	if err := unix.Mount("tmpfs", mnt, "tmpfs", 0, "size=400k"); err != nil {
		t.Fatalf("mount tmpfs (the tests run as root): %v", err)
	}
	t.Cleanup(func() { unix.Unmount(mnt, unix.MNT_DETACH) })
	var urls strings.Builder
	const n = 200
	for i := range n {
		fmt.Fprintf(&urls, "%s/p%d.html\n", srv.URL, i)
	}
	cmd := exec.Command(filepath.Join(bin, "fetch"), "--allow-private", "--delay", "0", "--quiet",
		"--warc", filepath.Join(mnt, "warc"))
	cmd.Stdin = strings.NewReader(urls.String())
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.Run()
	if code := cmd.ProcessState.ExitCode(); code != 1 {
		t.Fatalf("exit %d, want 1; stderr %q", code, stderr.String())
	}
	seen := map[string]bool{}
	warcErrors, fetched := 0, 0
	for i, line := range strings.Split(strings.TrimSuffix(stdout.String(), "\n"), "\n") {
		r, err := record.Parse([]byte(line))
		if err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		seen[r.URL()] = true
		e, _ := r.String("error")
		switch {
		case strings.HasPrefix(e, "warc: "):
			warcErrors++
			if st, _, _ := r.Float("status"); st != 200 || r.Has("warc_file") {
				t.Errorf("the record whose WARC write failed: %s", line)
			}
		case e == "":
			fetched++
			if !r.Has("warc_file") {
				t.Errorf("fetched without a WARC record: %s", line)
			}
		}
	}
	if len(seen) != n || warcErrors == 0 || fetched == 0 {
		t.Fatalf("%d of %d URLs have a record (%d fetched, %d warc errors); stderr %q", len(seen), n, fetched, warcErrors, stderr.String())
	}
}
