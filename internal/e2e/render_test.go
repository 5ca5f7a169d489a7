package e2e

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sekitei/crawlkit/pkg/record"
	"github.com/sekitei/crawlkit/pkg/render"
	"github.com/sekitei/crawlkit/pkg/warc"
)

// TestRenderAutoCrawlsAJavaScriptSite crawls testdata/jssite, whose pages
// build their links with JavaScript (from the page's own script and from
// an XHR to a JSON endpoint; one script robots.txt disallows would add a
// link), two hops deep from its home page with fetch --render auto, and
// indexes what it saw with barrel.
func TestRenderAutoCrawlsAJavaScriptSite(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if b, err := render.Start(render.Options{}); err != nil {
		t.Skipf("chromium cannot start: %v", err)
	} else {
		b.Close()
	}
	bin := tools(t, root)

	var mu sync.Mutex
	asked := map[string]int{}
	fs := http.FileServer(http.Dir(filepath.Join(root, "testdata", "jssite")))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		asked[r.URL.Path]++
		mu.Unlock()
		fs.ServeHTTP(w, r)
	}))
	defer srv.Close()

	dir := t.TempDir()
	warcDir := filepath.Join(dir, "warc")
	all := filepath.Join(dir, "fetched.ndjson")
	seen := map[string]bool{srv.URL + "/index.html": true}
	frontier := []string{srv.URL + "/index.html"}
	recs := map[string]*record.Record{}
	for hop := 0; hop <= 2 && len(frontier) > 0; hop++ {
		cmd := exec.Command(filepath.Join(bin, "fetch"), "--render", "auto", "--allow-private", "--delay", "0",
			"--warc", warcDir, "--warc-prefix", "hop"+string(rune('0'+hop)), "--quiet")
		cmd.Dir = dir
		cmd.Stdin = strings.NewReader(strings.Join(frontier, "\n") + "\n")
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("fetch, hop %d: %v\n%s", hop, err, stderr.String())
		}
		f, err := os.OpenFile(all, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		f.Write(out)
		f.Close()
		frontier = nil
		sc := bufio.NewScanner(strings.NewReader(string(out)))
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			r, err := record.Parse(sc.Bytes())
			if err != nil {
				t.Fatal(err)
			}
			recs[r.URL()] = r
			var links []string
			r.Decode("links", &links)
			for _, l := range links {
				if strings.HasPrefix(l, srv.URL+"/") && !seen[l] {
					seen[l] = true
					frontier = append(frontier, l)
				}
			}
		}
	}

	var got []string
	for u := range recs {
		got = append(got, strings.TrimPrefix(u, srv.URL))
	}
	sort.Strings(got)
	want := "/a.html /c.html /e.html /f.html /index.html /static1.html /static2.html"
	if strings.Join(got, " ") != want {
		t.Errorf("pages fetched %v, want %s", got, want)
	}
	mu.Lock()
	if asked["/private/tracker.js"] != 0 || asked["/secret.html"] != 0 {
		t.Errorf("server log: the disallowed script asked %d times, the page it links %d times", asked["/private/tracker.js"], asked["/secret.html"])
	}
	if asked["/api/index.json"] != 1 {
		t.Errorf("the XHR of the home page was asked %d times, want 1", asked["/api/index.json"])
	}
	mu.Unlock()
	for p, shell := range map[string]bool{"/index.html": true, "/a.html": true, "/c.html": true, "/e.html": true, "/f.html": true, "/static1.html": false, "/static2.html": false} {
		r := recs[srv.URL+p]
		if r == nil {
			continue
		}
		rendered, _, _ := r.Bool("rendered")
		if rendered != shell {
			t.Errorf("%s: rendered %v, want %v", p, rendered, shell)
		}
		if e, ok := r.String("error"); ok {
			t.Errorf("%s: error %s", p, e)
		}
		if shell {
			if n, _, _ := r.Float("render_blocked"); n != 1 {
				t.Errorf("%s: render_blocked %v, want 1 (the disallowed script)", p, n)
			}
		}
	}
	if title, _ := recs[srv.URL+"/index.html"].String("title"); title != "Quokka shop" {
		t.Errorf("home page title %q, want the one its script sets", title)
	}

	// The WARC: each rendered page's DOM as a conversion record referring
	// to its response.
	files, _ := filepath.Glob(filepath.Join(warcDir, "*.warc.gz"))
	responses, conversions := map[string]string{}, map[string]string{}
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		r, err := warc.NewReader(f)
		if err != nil {
			t.Fatal(err)
		}
		for {
			rec, err := r.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			switch rec.Type() {
			case warc.TypeResponse:
				responses[rec.Header.Get(warc.FieldRecordID)] = rec.TargetURI()
			case warc.TypeConversion:
				conversions[rec.TargetURI()] = rec.Header.Get("WARC-Refers-To")
			}
		}
		f.Close()
	}
	if len(conversions) != 5 {
		t.Errorf("%d conversion records, want 5 (the shells): %v", len(conversions), conversions)
	}
	for u, ref := range conversions {
		if responses[ref] != u {
			t.Errorf("conversion record of %s refers to %q, the response of %q", u, ref, responses[ref])
		}
	}

	// barrel indexes the rendered pages: words only their scripts write.
	idx := filepath.Join(dir, "index")
	if out, err := exec.Command(filepath.Join(bin, "barrel"), "build", "--index", idx, all).CombinedOutput(); err != nil {
		t.Fatalf("barrel build: %v\n%s", err, out)
	}
	// (barrel keys /index.html as /.)
	for word, page := range map[string]string{"tangerinewalrus": "/e.html", "zanzibarquokka": "/", "velvetpangolin": "/c.html"} {
		out, err := exec.Command(filepath.Join(bin, "barrel"), "search", "--index", idx, word).CombinedOutput()
		if err != nil {
			t.Fatalf("barrel search %s: %v\n%s", word, err, out)
		}
		if !strings.Contains(string(out), `"url":"`+srv.URL+page+`"`) {
			t.Errorf("barrel search %s: want %s\n%s", word, page, out)
		}
	}
}

// TestRenderAutoContainsAHangingPage: fetch --render auto on a page whose
// script loops forever (while(true){}) spends the page's --render-budget,
// writes the page with the raw fetch's fields and an error saying
// rendering failed, and renders the site's next pages.
func TestRenderAutoContainsAHangingPage(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if b, err := render.Start(render.Options{}); err != nil {
		t.Skipf("chromium cannot start: %v", err)
	} else {
		b.Close()
	}
	bin := tools(t, root)
	fs := http.FileServer(http.Dir(filepath.Join(root, "testdata", "jssite")))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/hang.html" {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			io.WriteString(w, `<!DOCTYPE html><html><head><title>Raw hang</title></head><body><div id="app"></div><a href="/static1.html">s</a><script>while (true) {}</script></body></html>`)
			return
		}
		fs.ServeHTTP(w, r)
	}))
	defer srv.Close()
	urls := []string{srv.URL + "/hang.html", srv.URL + "/index.html", srv.URL + "/a.html"}
	cmd := exec.Command(filepath.Join(bin, "fetch"), "--render", "auto", "--allow-private", "--delay", "0",
		"--workers", "1", "--render-tabs", "1", "--render-budget", "2s", "--quiet")
	cmd.Stdin = strings.NewReader(strings.Join(urls, "\n") + "\n")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("fetch: %v\n%s", err, stderr.String())
	}
	recs := map[string]*record.Record{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		r, err := record.Parse([]byte(line))
		if err != nil {
			t.Fatal(err)
		}
		recs[r.URL()] = r
	}
	h := recs[srv.URL+"/hang.html"]
	if h == nil {
		t.Fatalf("no record of the hanging page:\n%s", out)
	}
	e, _ := h.String("error")
	title, _ := h.String("title")
	rendered, _, _ := h.Bool("rendered")
	if !strings.HasPrefix(e, "render: rendering failed") || title != "Raw hang" || rendered {
		t.Errorf("hanging page: error %q, title %q, rendered %v; want the raw fields and a render error", e, title, rendered)
	}
	for _, u := range urls[1:] {
		r := recs[u]
		if r == nil {
			t.Fatalf("no record of %s:\n%s", u, out)
		}
		if ok, _, _ := r.Bool("rendered"); !ok {
			e, _ := r.String("error")
			t.Errorf("%s after the hanging page was not rendered (error %q)", u, e)
		}
	}
}

// TestRenderSubrequestsKeepTheHostsPace: with --per-host 1 and --delay, the
// server never has two requests of the crawl in flight at once, the
// browser's requests (scripts, XHR) included, and the host's requests,
// pages and the browser's together, start at least --delay apart (less a
// margin for the loopback's scheduling): one schedule for both.
func TestRenderSubrequestsKeepTheHostsPace(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if b, err := render.Start(render.Options{}); err != nil {
		t.Skipf("chromium cannot start: %v", err)
	} else {
		b.Close()
	}
	bin := tools(t, root)
	const delay = 400 * time.Millisecond
	var mu sync.Mutex
	inflight, most := 0, 0
	var starts []time.Time
	var paths []string
	subs := 0
	fs := http.FileServer(http.Dir(filepath.Join(root, "testdata", "jssite")))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		inflight++
		most = max(most, inflight)
		if r.URL.Path != "/robots.txt" { // pages and the browser's requests: one schedule
			starts = append(starts, time.Now())
			paths = append(paths, r.URL.Path)
			if !strings.HasSuffix(r.URL.Path, ".html") {
				subs++
			}
		}
		mu.Unlock()
		defer func() { mu.Lock(); inflight--; mu.Unlock() }()
		time.Sleep(20 * time.Millisecond) // a request takes a while, so overlaps would show
		fs.ServeHTTP(w, r)
	}))
	defer srv.Close()
	// Enough pages that the crawl still fetches pages while the browser,
	// started with the first, asks for the earlier pages' scripts.
	var urls []string
	for i := range 4 {
		for _, p := range []string{"/index.html", "/a.html", "/c.html"} {
			urls = append(urls, fmt.Sprintf("%s%s?n=%d", srv.URL, p, i))
		}
	}
	cmd := exec.Command(filepath.Join(bin, "fetch"), "--render", "always", "--allow-private", "--delay", delay.String(),
		"--per-host", "1", "--render-tabs", "2", "--quiet")
	cmd.Stdin = strings.NewReader(strings.Join(urls, "\n") + "\n")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("fetch: %v\n%s", err, stderr.String())
	}
	if n := strings.Count(string(out), `"rendered":true`); n != len(urls) {
		t.Fatalf("%d pages rendered, want %d:\n%s", n, len(urls), out)
	}
	mu.Lock()
	defer mu.Unlock()
	if most != 1 {
		t.Errorf("the server had %d requests in flight at once; --per-host 1 allows 1", most)
	}
	if subs < 2*len(urls) {
		t.Fatalf("requests %v: want app.js and an XHR per page", paths)
	}
	for i := 1; i < len(starts); i++ {
		if gap := starts[i].Sub(starts[i-1]); gap < delay-100*time.Millisecond {
			t.Errorf("%s then %s %v apart; --delay is %v", paths[i-1], paths[i], gap, delay)
		}
	}
}
