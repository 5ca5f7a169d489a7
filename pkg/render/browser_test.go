package render

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// startBrowser starts chromium for a test; it skips the test, saying
// why, only where chromium is not installed (scripts/deps.sh installs it).
func startBrowser(t *testing.T, opt Options) *Browser {
	t.Helper()
	if _, err := LookPath(); err != nil {
		t.Skipf("chromium cannot start: %v", err)
	}
	b, err := Start(opt)
	if err != nil {
		t.Fatalf("chromium is installed but cannot start: %v", err)
	}
	t.Cleanup(b.Close)
	return b
}

// site serves testdata/jssite on loopback and logs the paths asked.
type site struct {
	*httptest.Server
	mu   sync.Mutex
	asks []string
}

func serveSite(t *testing.T) *site {
	t.Helper()
	s := &site{}
	fs := http.FileServer(http.Dir(filepath.Join("..", "..", "testdata", "jssite")))
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.asks = append(s.asks, r.URL.Path)
		s.mu.Unlock()
		fs.ServeHTTP(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *site) asked(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, p := range s.asks {
		if p == path {
			n++
		}
	}
	return n
}

// get is a SubFetcher over net/http that refuses /private/, as the
// site's robots.txt asks.
func get(ctx context.Context, url string) (Response, error) {
	if strings.Contains(url, "/private/") {
		return Response{}, errors.New("disallowed by robots.txt")
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return Response{}, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return Response{}, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return Response{Status: resp.StatusCode, Header: resp.Header, Body: body}, err
}

func pageOf(t *testing.T, s *site, path string) Page {
	t.Helper()
	body, err := os.ReadFile(filepath.Join("..", "..", "testdata", "jssite", path))
	if err != nil {
		t.Fatal(err)
	}
	return Page{URL: s.URL + path, Response: Response{Status: 200, Header: http.Header{"Content-Type": {"text/html; charset=utf-8"}}, Body: body}}
}

func TestRenderBuildsTheDOMThroughTheSubFetcher(t *testing.T) {
	b := startBrowser(t, Options{Tabs: 2, Budget: 20 * time.Second})
	s := serveSite(t)
	res, err := b.Render(context.Background(), pageOf(t, s, "/index.html"), get)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`href="/a.html"`, `href="/static1.html"`, `href="/c.html"`, "zanzibarquokka", "<title>Quokka shop</title>"} {
		if !strings.Contains(res.HTML, want) {
			t.Errorf("rendered DOM lacks %s:\n%s", want, res.HTML)
		}
	}
	if strings.Contains(res.HTML, "secret") {
		t.Errorf("the disallowed script ran:\n%s", res.HTML)
	}
	// app.js and the XHR; the page itself is served from its fetch.
	if res.Subrequests != 2 || res.Blocked != 1 {
		t.Errorf("subrequests %d, blocked %d; want 2 and 1", res.Subrequests, res.Blocked)
	}
	if n := s.asked("/index.html"); n != 0 {
		t.Errorf("the browser asked the server for the page itself %d times", n)
	}
	if n := s.asked("/private/tracker.js"); n != 0 {
		t.Errorf("the disallowed script was requested %d times", n)
	}
	if s.asked("/api/index.json") != 1 || s.asked("/app.js") != 1 {
		t.Errorf("server log %v: want app.js and /api/index.json once each", s.asks)
	}
}

func TestRenderCapsSubrequests(t *testing.T) {
	b := startBrowser(t, Options{Tabs: 1, Budget: 20 * time.Second, MaxSubrequests: 1})
	s := serveSite(t)
	res, err := b.Render(context.Background(), pageOf(t, s, "/index.html"), get)
	if err != nil {
		t.Fatal(err)
	}
	if res.Subrequests != 1 || s.asked("/api/index.json") != 0 {
		t.Errorf("subrequests %d, XHR asked %d times: the cap of 1 lets app.js through only", res.Subrequests, s.asked("/api/index.json"))
	}
	if strings.Contains(res.HTML, "zanzibarquokka") || !strings.Contains(res.HTML, `href="/a.html"`) {
		t.Errorf("want the links app.js builds at once and not the XHR's text:\n%s", res.HTML)
	}
}

// TestRenderRestartsAKilledBrowser kills the browser: the next page fails
// saying so, the one after renders in a new browser, and once closed
// neither browser left a file in the temp dir.
func TestRenderRestartsAKilledBrowser(t *testing.T) {
	tmp, err := os.MkdirTemp("", "render") // short: chromium's socket path must fit 108 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(tmp) })
	t.Setenv("TMPDIR", tmp)
	b := startBrowser(t, Options{Tabs: 1, Budget: 20 * time.Second})
	s := serveSite(t)
	pid := b.PID()
	if pid == 0 {
		t.Fatal("no browser process")
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_, err = b.Render(context.Background(), pageOf(t, s, "/index.html"), get)
	if err == nil || !strings.Contains(err.Error(), "rendering failed") {
		t.Fatalf("render on a killed browser: %v, want an error saying rendering failed", err)
	}
	if b.Restarts() != 1 || b.PID() == pid {
		t.Fatalf("restarts %d, pid %d then %d: want the browser restarted", b.Restarts(), pid, b.PID())
	}
	res, err := b.Render(context.Background(), pageOf(t, s, "/index.html"), get)
	if err != nil || !strings.Contains(res.HTML, "zanzibarquokka") {
		t.Fatalf("after the restart: %v\n%s", err, res.HTML)
	}
	b.Close()
	if left, err := os.ReadDir(tmp); err != nil || len(left) > 0 {
		var names []string
		for _, e := range left {
			names = append(names, e.Name())
		}
		t.Fatalf("the temp dir after the browsers stopped: %v %v, want it empty", err, names)
	}
}

// TestRenderWithALongTempDir: with a temp dir whose path leaves no room
// for chromium's socket below it, the browser's directory goes to /tmp,
// the browser starts and renders, and nothing is left behind.
func TestRenderWithALongTempDir(t *testing.T) {
	long := filepath.Join(t.TempDir(), strings.Repeat("d", 90))
	if err := os.Mkdir(long, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TMPDIR", long)
	before, _ := filepath.Glob("/tmp/chromium-*")
	b := startBrowser(t, Options{Tabs: 1, Budget: 20 * time.Second})
	s := serveSite(t)
	res, err := b.Render(context.Background(), pageOf(t, s, "/index.html"), get)
	if err != nil || !strings.Contains(res.HTML, "zanzibarquokka") {
		t.Fatalf("render with TMPDIR %d bytes long: %v\n%s", len(long), err, res.HTML)
	}
	b.Close()
	after, _ := filepath.Glob("/tmp/chromium-*")
	if len(after) > len(before) {
		t.Errorf("/tmp/chromium-* after the browser stopped: %v (before: %v)", after, before)
	}
	if left, _ := os.ReadDir(long); len(left) > 0 {
		t.Errorf("the long temp dir holds %d entries, want none", len(left))
	}
}

// TestSweepOrphans: a browser's directory whose owner process has ended
// (gone, or a zombie) is removed; one whose owner runs, one without an owner file and one
// whose file names no process are left.
func TestSweepOrphans(t *testing.T) {
	base := t.TempDir()
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	// A zombie: ended, not yet reaped (Wait, after the sweep).
	zombie := exec.Command("true")
	if err := zombie.Start(); err != nil {
		t.Fatal(err)
	}
	defer zombie.Wait()
	var info unix.Siginfo // until it exits, leaving it unreaped (WNOWAIT)
	if err := unix.Waitid(unix.P_PID, zombie.Process.Pid, &info, unix.WEXITED|unix.WNOWAIT, nil); err != nil {
		t.Fatal(err)
	}
	dirs := map[string]string{
		"chromium-ended":   strconv.Itoa(gone.Process.Pid),
		"chromium-zombie":  strconv.Itoa(zombie.Process.Pid),
		"chromium-running": strconv.Itoa(os.Getpid()),
		"chromium-garbage": "not a pid",
		"chromium-unowned": "",
	}
	for name, owner := range dirs {
		d := filepath.Join(base, name)
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(d, "profile-file"), []byte("x"), 0o644)
		if owner != "" {
			os.WriteFile(filepath.Join(d, ownerFile), []byte(owner), 0o644)
		}
	}
	sweepOrphans(base)
	for name := range dirs {
		_, err := os.Stat(filepath.Join(base, name))
		want := name == "chromium-ended" || name == "chromium-zombie"
		if gone := os.IsNotExist(err); gone != want {
			t.Errorf("%s: removed %v, want %v", name, gone, want)
		}
	}
}

// TestRenderContainsAHangingPage: a page whose script never returns
// (while(true){}) spends its budget and fails, saying rendering failed, and
// the next page of the same site, in the same browser, renders.
func TestRenderContainsAHangingPage(t *testing.T) {
	b := startBrowser(t, Options{Tabs: 1, Budget: 3 * time.Second})
	s := serveSite(t)
	hang := Page{URL: s.URL + "/hang.html", Response: Response{Status: 200,
		Header: http.Header{"Content-Type": {"text/html; charset=utf-8"}},
		Body:   []byte(`<!DOCTYPE html><html><body><div id="app"></div><script>while (true) {}</script></body></html>`)}}
	_, err := b.Render(context.Background(), hang, get)
	if err == nil || !strings.Contains(err.Error(), "rendering failed") {
		t.Fatalf("render of a page that loops forever: %v, want an error saying rendering failed", err)
	}
	for i := 0; i < 2; i++ {
		res, err := b.Render(context.Background(), pageOf(t, s, "/index.html"), get)
		if err != nil || !strings.Contains(res.HTML, "zanzibarquokka") {
			t.Fatalf("page %d after the hanging one: %v\n%s", i+1, err, res.HTML)
		}
	}
}
