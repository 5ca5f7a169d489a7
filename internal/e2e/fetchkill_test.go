package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sekitei/crawlkit/internal/testreport"
	"github.com/sekitei/crawlkit/pkg/record"
	"github.com/sekitei/crawlkit/pkg/warc"
)

// fetchBin builds ./cmd/fetch alone, faster than all the tools.
func fetchBin(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "fetch")
	build := exec.Command("go", "build", "-o", bin, "./cmd/fetch")
	build.Dir = "../.."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build fetch: %v\n%s", err, out)
	}
	return bin
}

// loggingSite serves /p/N pages after a seeded delay, with a body of size
// bytes, and logs every request to a page.
type loggingSite struct {
	mu   sync.Mutex
	hits map[string]int
	base string
}

func newLoggingSite(t *testing.T, size int, delay func() time.Duration) *loggingSite {
	t.Helper()
	s := &loggingSite{hits: map[string]int{}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		s.mu.Lock()
		s.hits[r.URL.Path]++
		d := delay()
		s.mu.Unlock()
		time.Sleep(d)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		body := fmt.Sprintf("<html><head><title>%s</title></head><body><p>page %s</p>", r.URL.Path, r.URL.Path)
		if size > len(body) {
			// incompressible filler, the same for a path on every request
			rnd := rand.New(rand.NewSource(int64(len(r.URL.Path)*7919) + int64(r.URL.Path[len(r.URL.Path)-1])))
			filler := make([]byte, (size-len(body))/2)
			rnd.Read(filler)
			body += fmt.Sprintf("<!-- %x -->", filler)
		}
		io.WriteString(w, body+"</body></html>")
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	s.base = "http://" + ln.Addr().String()
	return s
}

func (s *loggingSite) counts() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := make(map[string]int, len(s.hits))
	for k, v := range s.hits {
		m[k] = v
	}
	return m
}

// journalCheck reads the record file and every WARC file of dir and
// reports the records by URL, the WARC response records of pages (not
// robots.txt, which no record points at) no record points at (orphans), and the records that point at no response record.
func journalCheck(t *testing.T, journal, dir string) (byURL map[string]int, orphans, dangling, recovered int) {
	t.Helper()
	byURL = map[string]int{}
	type loc struct {
		file string
		off  int64
	}
	pointed := map[loc]bool{}
	data, err := os.ReadFile(journal)
	if err != nil {
		t.Fatal(err)
	}
	for i, line := range bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		rec, err := record.Parse(line)
		if err != nil {
			t.Fatalf("%s:%d: %v", journal, i+1, err)
		}
		byURL[rec.URL()]++
		if msg, _ := rec.String("error"); msg != "" {
			t.Errorf("%s:%d: a record with error %q", journal, i+1, msg)
		}
		if ok, _, _ := rec.Bool("recovered"); ok {
			recovered++
		}
		if wf, ok := rec.String("warc_file"); ok {
			off, _, _ := rec.Float("warc_offset")
			pointed[loc{filepath.Clean(wf), int64(off)}] = true
		}
	}
	responses := map[loc]bool{}
	files, _ := filepath.Glob(filepath.Join(dir, "*.warc.gz"))
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		r, err := warc.NewReader(fh)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for {
			rec, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Errorf("%s: torn or damaged: %v", f, err)
				break
			}
			if _, err := io.Copy(io.Discard, rec.Body); err != nil {
				t.Errorf("%s: record at %d: torn body: %v", f, rec.Offset, err)
				break
			}
			if rec.Type() == warc.TypeResponse && !strings.HasSuffix(rec.TargetURI(), "/robots.txt") {
				responses[loc{filepath.Clean(f), rec.Offset}] = true
			}
		}
		fh.Close()
	}
	for l := range responses {
		if !pointed[l] {
			orphans++
		}
	}
	for l := range pointed {
		if !responses[l] {
			dangling++
		}
	}
	return byURL, orphans, dangling, recovered
}

// TestFetchKillResume kills fetch --resume with SIGKILL at seeded random
// moments, at least 30 times, resumes it after each kill, and checks that
// no page is fetched again beyond the requests in flight at each kill,
// that WARC responses and records are one to one, and that no WARC file
// is torn, nor a spill file left.
func TestFetchKillResume(t *testing.T) {
	bin := fetchBin(t)
	seed := int64(32)
	rnd := rand.New(rand.NewSource(seed))
	site := newLoggingSite(t, 2000, func() time.Duration { return time.Duration(5+rnd.Intn(40)) * time.Millisecond })
	dir := t.TempDir()
	const pages, workers, wantKills = 1200, 8, 30
	var urls strings.Builder
	for i := 0; i < pages; i++ {
		fmt.Fprintf(&urls, "%s/p/%d\n", site.base, i)
	}
	in := filepath.Join(dir, "urls.txt")
	if err := os.WriteFile(in, []byte(urls.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	journal := filepath.Join(dir, "fetched.ndjson")
	warcDir := filepath.Join(dir, "warc")
	os.Mkdir(warcDir, 0o755)
	spillDir := filepath.Join(dir, "spill")
	os.Mkdir(spillDir, 0o755)
	args := []string{"--quiet", "--delay", "0", "--per-host", fmt.Sprint(workers), "--workers", fmt.Sprint(workers),
		"--retries", "0", "--allow-private", "--warc", warcDir, "--resume", journal, "--spill-dir", spillDir, in}
	kills, runs := 0, 0
	for {
		runs++
		if runs > 200 {
			t.Fatalf("fetch did not finish after %d runs", runs)
		}
		cmd := exec.Command(bin, args...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		if kills < wantKills {
			// mostly while fetching; some while it starts and reconciles
			wait := time.Duration(rnd.Intn(250)) * time.Millisecond
			if rnd.Intn(5) == 0 {
				wait = time.Duration(rnd.Intn(15)) * time.Millisecond
			}
			select {
			case err := <-exited:
				if err != nil {
					t.Fatalf("run %d: %v\n%s", runs, err, stderr.String())
				}
				t.Fatalf("run %d finished before its kill: the test needs more pages", runs)
			case <-time.After(wait):
			}
			cmd.Process.Signal(syscall.SIGKILL)
			<-exited
			kills++
			// A killed run leaves no spill file behind (cron's /tmp
			// would fill with them over a year of turns).
			if left, _ := os.ReadDir(spillDir); len(left) > 0 {
				t.Fatalf("run %d, killed: %d files left in the spill dir, first %s", runs, len(left), left[0].Name())
			}
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		select {
		case err := <-exited:
			cancel()
			if err != nil {
				t.Fatalf("last run: %v\n%s", err, stderr.String())
			}
		case <-ctx.Done():
			cancel()
			cmd.Process.Kill()
			t.Fatalf("last run did not end\n%s", stderr.String())
		}
		break
	}
	hits := site.counts()
	extra, twice := 0, 0
	for i := 0; i < pages; i++ {
		n := hits[fmt.Sprintf("/p/%d", i)]
		if n == 0 {
			t.Errorf("/p/%d never requested", i)
		}
		if n > 1 {
			extra += n - 1
			twice++
		}
	}
	byURL, orphans, dangling, recovered := journalCheck(t, journal, warcDir)
	testreport.Logf(t, "seed %d: kills %d, runs %d, pages %d, workers %d", seed, kills, runs, pages, workers)
	testreport.Logf(t, "extra requests %d (on %d URLs; bound: %d kills x %d workers = %d)", extra, twice, kills, workers, kills*workers)
	testreport.Logf(t, "orphan WARC responses %d, records pointing at no response %d, records rebuilt from the WARC %d", orphans, dangling, recovered)
	if extra > kills*workers {
		t.Errorf("%d extra requests: more than the %d that can be in flight at %d kills", extra, kills*workers, kills)
	}
	if orphans != 0 || dangling != 0 {
		t.Errorf("WARC responses and records not one to one: %d orphans, %d dangling", orphans, dangling)
	}
	if len(byURL) != pages {
		t.Errorf("%d URLs recorded, want %d", len(byURL), pages)
	}
	for u, n := range byURL {
		if n != 1 {
			t.Errorf("%s recorded %d times", u, n)
		}
	}
}

// TestFetchDiskFull runs fetch --resume on a 3 MB tmpfs that fills: it must
// exit non-zero with a clear error, leave no torn WARC member and, once
// resumed with room, every WARC response has its record.
func TestFetchDiskFull(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs root")
	}
	bin := fetchBin(t)
	site := newLoggingSite(t, 20000, func() time.Duration { return 0 })
	dir := t.TempDir()
	mnt := filepath.Join(dir, "small")
	os.Mkdir(mnt, 0o755)
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", mnt).CombinedOutput(); err != nil {
		t.Fatalf("mount: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", mnt).Run() })
	const pages = 400
	var urls strings.Builder
	for i := 0; i < pages; i++ {
		fmt.Fprintf(&urls, "%s/p/%d\n", site.base, i)
	}
	in := filepath.Join(dir, "urls.txt")
	os.WriteFile(in, []byte(urls.String()), 0o644)
	journal := filepath.Join(mnt, "fetched.ndjson")
	warcDir := filepath.Join(mnt, "warc")
	os.Mkdir(warcDir, 0o755)
	args := []string{"--quiet", "--delay", "0", "--per-host", "8", "--workers", "8", "--retries", "0", "--allow-private",
		"--warc", warcDir, "--resume", journal, in}
	cmd := exec.Command(bin, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	if err == nil {
		t.Fatalf("fetch on a full disk exited 0\n%s", stderr.String())
	}
	if !strings.Contains(stderr.String(), "no space left on device") {
		t.Errorf("stderr does not name the full disk:\n%s", stderr.String())
	}
	t.Logf("full disk: %v; stderr: %s", err, strings.TrimSpace(lastLines(stderr.String(), 3)))
	// No torn member now, before any repair.
	files, _ := filepath.Glob(filepath.Join(warcDir, "*.warc.gz"))
	for _, f := range files {
		if cut, err := warc.CutTornTail(f); err != nil || cut != 0 {
			t.Errorf("%s: torn tail of %d bytes (%v)", f, cut, err)
		}
	}
	if out, err := exec.Command("mount", "-o", "remount,size=64m", mnt).CombinedOutput(); err != nil {
		t.Fatalf("remount: %v %s", err, out)
	}
	before := site.counts()
	cmd = exec.Command(bin, args...)
	stderr.Reset()
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("resume with room: %v\n%s", err, stderr.String())
	}
	hits := site.counts()
	again := 0
	for p, n := range before {
		again += hits[p] - n
	}
	byURL, orphans, dangling, recovered := journalCheck(t, journal, warcDir)
	t.Logf("pages requested again on resume %d (bound: 8 in flight), orphan WARC responses %d, dangling records %d, rebuilt %d", again, orphans, dangling, recovered)
	if again > 8 {
		t.Errorf("%d pages fetched before the disk filled were fetched again", again)
	}
	if orphans != 0 || dangling != 0 {
		t.Errorf("WARC responses and records not one to one: %d orphans, %d dangling", orphans, dangling)
	}
	if len(byURL) != pages {
		t.Errorf("%d URLs recorded, want %d", len(byURL), pages)
	}
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// TestFetchResumeRebuildsFromWARC takes away the last records of a finished
// run, as a kill between a page's WARC write and its record does: the
// resumed run rebuilds them from the WARC files and requests nothing.
func TestFetchResumeRebuildsFromWARC(t *testing.T) {
	bin := fetchBin(t)
	site := newLoggingSite(t, 500, func() time.Duration { return 0 })
	dir := t.TempDir()
	const pages, lost = 50, 7
	var urls strings.Builder
	for i := 0; i < pages; i++ {
		fmt.Fprintf(&urls, "%s/p/%d\n", site.base, i)
	}
	in := filepath.Join(dir, "urls.txt")
	os.WriteFile(in, []byte(urls.String()), 0o644)
	journal := filepath.Join(dir, "fetched.ndjson")
	warcDir := filepath.Join(dir, "warc")
	os.Mkdir(warcDir, 0o755)
	args := []string{"--quiet", "--delay", "0", "--allow-private", "--warc", warcDir, "--resume", journal, in}
	if out, err := exec.Command(bin, args...).CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	data, _ := os.ReadFile(journal)
	lines := strings.SplitAfter(strings.TrimSuffix(string(data), "\n"), "\n")
	if len(lines) != pages {
		t.Fatalf("%d records, want %d", len(lines), pages)
	}
	// What the records taken away said of their pages, which the rebuilt
	// ones must say too.
	page := func(line string) string {
		rec, err := record.Parse([]byte(line))
		if err != nil {
			t.Fatal(err)
		}
		title, _ := rec.String("title")
		sig, _ := rec.String("text_simhash")
		digest, _ := rec.String("digest")
		return rec.URL() + " " + title + " " + sig + " " + digest
	}
	var takenAway []string
	for _, l := range lines[pages-lost:] {
		takenAway = append(takenAway, page(l))
	}
	os.WriteFile(journal, []byte(strings.Join(lines[:pages-lost], "")), 0o644)
	before := site.counts()
	out, err := exec.Command(bin, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	again := 0
	for p, n := range site.counts() {
		again += n - before[p]
	}
	byURL, orphans, dangling, recovered := journalCheck(t, journal, warcDir)
	t.Logf("requests on resume %d, rebuilt %d, orphans %d; stderr: %s", again, recovered, orphans, strings.TrimSpace(string(out)))
	if again != 0 || recovered != lost || orphans != 0 || dangling != 0 || len(byURL) != pages {
		t.Errorf("resume requested %d pages, rebuilt %d of %d, %d orphans, %d dangling, %d URLs recorded", again, recovered, lost, orphans, dangling, len(byURL))
	}
	data, _ = os.ReadFile(journal)
	var rebuilt []string
	for _, l := range strings.SplitAfter(strings.TrimSuffix(string(data), "\n"), "\n")[pages-lost:] {
		rebuilt = append(rebuilt, page(l))
	}
	slices.Sort(takenAway)
	slices.Sort(rebuilt)
	if !slices.Equal(takenAway, rebuilt) {
		t.Errorf("the rebuilt records say of their pages\n%s\nthe records taken away\n%s", strings.Join(rebuilt, "\n"), strings.Join(takenAway, "\n"))
	}
	if !strings.Contains(string(out), fmt.Sprintf("%d records rebuilt from WARC responses", lost)) {
		t.Errorf("stderr does not say what was rebuilt:\n%s", out)
	}
}
