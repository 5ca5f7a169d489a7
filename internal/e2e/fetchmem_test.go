package e2e

import (
	"bytes"
	"fmt"
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

	"github.com/sekitei/crawlkit/internal/testreport"
	"github.com/sekitei/crawlkit/pkg/record"
)

// fetchPeakBound is docs/fetch.md's bound on fetch's peak memory (bytes)
// for workers pages in flight, bodies cut at maxSize and the default
// --max-links, --large-decodes and --max-decoded, on pages in UTF-8.
func fetchPeakBound(workers, maxSize int64) int64 {
	return 100<<20 + workers*4*maxSize
}

// One host with --per-host 32: 32 pages of a million links
// each (26 MB, cut at the 10 MiB body limit) in flight at once; fetch's
// peak memory stays within its documented bound. CRAWLKIT_LINK_PAGES sets
// another number of pages in flight (docs/fetch.md quotes 256).
func TestFetchMemoryBoundedOnLinkDensePages(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	bin := tools(t, root)
	inFlight := 32
	if v := os.Getenv("CRAWLKIT_LINK_PAGES"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("CRAWLKIT_LINK_PAGES=%q: want a number of pages", v)
		}
		inFlight = n
	}
	var page bytes.Buffer
	page.WriteString("<!doctype html><html><head><title>links</title></head><body>")
	for i := range 1000000 {
		fmt.Fprintf(&page, `<a href="/l/%07d">x</a>`, i)
	}
	page.WriteString("</body></html>")
	// Every page waits for all 32 requests: they are in flight together.
	var mu sync.Mutex
	arrived, all := 0, make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		mu.Lock()
		if arrived++; arrived == inFlight {
			close(all)
		}
		mu.Unlock()
		select {
		case <-all:
		case <-time.After(60 * time.Second):
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Content-Length", fmt.Sprint(page.Len()))
		w.Write(page.Bytes())
	}))
	defer srv.Close()
	var urls strings.Builder
	for i := range inFlight {
		fmt.Fprintf(&urls, "%s/page/%d\n", srv.URL, i)
	}
	cmd := exec.Command(filepath.Join(bin, "fetch"), "--allow-private", "--delay", "0", "--quiet",
		"--workers", fmt.Sprint(inFlight), "--per-host", fmt.Sprint(inFlight), "--read-timeout", "60s", "--timeout", "120s")
	cmd.Stdin = strings.NewReader(urls.String())
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("fetch: %v\n%s", err, stderr.String())
	}
	select {
	case <-all:
	default:
		t.Fatalf("only %d requests came together", arrived)
	}
	lines := strings.Split(strings.TrimSuffix(stdout.String(), "\n"), "\n")
	if len(lines) != inFlight {
		t.Fatalf("%d records for %d URLs", len(lines), inFlight)
	}
	for _, line := range lines {
		r, err := record.Parse([]byte(line))
		if err != nil {
			t.Fatal(err)
		}
		tr, _ := r.String("truncated")
		var links []string
		r.Decode("links", &links)
		cut, _, _ := r.Float("links_cut")
		if tr != "length" || len(links) != 10000 || cut < 100000 {
			t.Fatalf("want a page cut at 10 MiB with 10000 links and the rest counted: truncated %q, %d links, links_cut %v", tr, len(links), cut)
		}
	}
	peak := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss << 10
	bound := fetchPeakBound(int64(inFlight), 10<<20)
	testreport.Logf(t, "peak RSS %d MB with %d pages in flight; documented bound %d MB", peak>>20, inFlight, bound>>20)
	if peak > bound {
		t.Fatalf("peak RSS %d MB over the documented bound %d MB", peak>>20, bound>>20)
	}
}
