package fetchcli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sekitei/crawlkit/pkg/clikit"
)

// limitedServer answers 503 to a request that would make more than limit
// served in the last second, as an overloaded host (or a rate limiter in
// front of it) does, and counts what it answered.
type limitedServer struct {
	mu       sync.Mutex
	served   []time.Time
	ok, busy int
}

func (s *limitedServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	const limit = 5
	now := time.Now()
	s.mu.Lock()
	for len(s.served) > 0 && now.Sub(s.served[0]) >= time.Second {
		s.served = s.served[1:]
	}
	over := len(s.served) >= limit
	if over {
		s.busy++
	} else {
		s.ok++
		s.served = append(s.served, now)
	}
	s.mu.Unlock()
	if over {
		http.Error(w, "busy", http.StatusServiceUnavailable)
		return
	}
	if r.URL.Path == "/robots.txt" {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "text/html")
	fmt.Fprint(w, "<title>p</title>")
}

// runLimited fetches n pages of a fresh limitedServer with fetch and the
// extra arguments, and returns the server's counts and the records' errors.
func runLimited(t *testing.T, ip string, n int, extra ...string) (ok, busy int, errs []string) {
	t.Helper()
	srv := &limitedServer{}
	ln, err := net.Listen("tcp", ip+":0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: srv}
	go hs.Serve(ln)
	defer hs.Close()
	var urls strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&urls, "http://%s/p%d\n", ln.Addr(), i)
	}
	in := filepath.Join(t.TempDir(), "urls.txt")
	if err := os.WriteFile(in, []byte(urls.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, stderr bytes.Buffer
	args := append([]string{"fetch", "--allow-private", "--quiet", "--delay", "0", "--per-host", "8", "--retry-backoff", "500ms"}, extra...)
	if rc := Main(append(args, in), clikit.Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &stderr}); rc != 0 {
		t.Fatalf("fetch exit %d: %s", rc, stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != n {
		t.Fatalf("%d records for %d URLs", len(lines), n)
	}
	for _, l := range lines {
		var r struct {
			Status int    `json:"status"`
			Error  string `json:"error"`
		}
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatal(err)
		}
		if r.Error != "" || r.Status != 200 {
			errs = append(errs, fmt.Sprintf("%d %s", r.Status, r.Error))
		}
	}
	srv.mu.Lock()
	defer srv.mu.Unlock()
	return srv.ok, srv.busy, errs
}

// TestBackoffByDefault: a host that answers 503 above 5 requests a second,
// fetched with no delay and 8 connections. Without the estimator about
// half the requests are refused; with it (the default) few are, and every
// page is fetched.
func TestBackoffByDefault(t *testing.T) {
	const n = 80
	ok, busy, errs := runLimited(t, "127.0.0.79", n, "--backoff=false")
	t.Logf("--backoff=false: %d of %d requests answered 503; %d records with errors", busy, ok+busy, len(errs))
	if share := float64(busy) / float64(ok+busy); share < 0.3 {
		t.Errorf("--backoff=false: %.0f%% answered 503: the server does not limit as the test needs", 100*share)
	}
	start := time.Now()
	ok, busy, errs = runLimited(t, "127.0.0.80", n)
	t.Logf("default: %d of %d requests answered 503 in %v; records with errors: %q", busy, ok+busy, time.Since(start).Round(time.Millisecond), errs)
	// The first burst of 8 connections meets the limit before any answer
	// can slow the host; after it, at most one request in ten more.
	if busy > 8+n/10 {
		t.Errorf("default: %d of %d requests answered 503, want at most %d (the first burst of 8 and a tenth of the pages)", busy, ok+busy, 8+n/10)
	}
	if len(errs) > 0 {
		t.Errorf("default: %d pages not fetched: %q", len(errs), errs)
	}
}
