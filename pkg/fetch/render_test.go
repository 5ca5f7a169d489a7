package fetch

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/sekitei/crawlkit/pkg/record"
	"github.com/sekitei/crawlkit/pkg/render"
	"github.com/sekitei/crawlkit/pkg/warc"
)

// killFirst kills the browser before the first page it is asked to render,
// as a crash would.
type killFirst struct {
	b      *render.Browser
	killed atomic.Bool
}

func (k *killFirst) Render(ctx context.Context, p render.Page, sub render.SubFetcher) (render.Result, error) {
	if !k.killed.Swap(true) {
		syscall.Kill(k.b.PID(), syscall.SIGKILL)
	}
	return k.b.Render(ctx, p, sub)
}

func startBrowser(t *testing.T) *render.Browser {
	t.Helper()
	b, err := render.Start(render.Options{Tabs: 2, Budget: 20 * time.Second})
	if err != nil {
		t.Skipf("chromium cannot start: %v", err)
	}
	t.Cleanup(b.Close)
	return b
}

// TestRenderAutoUsesTheRenderedDOM fetches the shells and a static page of
// testdata/jssite with Render Auto: the shells' records carry the links,
// title and text the browser built, the browser's requests went through
// fetch (robots.txt refusing the private script) and are counted; a
// browser killed before a page is restarted, and that page keeps its raw
// fields with an error saying rendering failed.
func TestRenderAutoUsesTheRenderedDOM(t *testing.T) {
	b := startBrowser(t)
	site := newHost(t, "127.0.0.1", http.FileServer(http.Dir(filepath.Join("..", "..", "testdata", "jssite"))))
	cfg := testConfig()
	cfg.Render = render.Auto
	cfg.Renderer = &killFirst{b: b}
	var st Stats
	cfg.Workers = 1
	out := runFetchStats(t, cfg, &st, site.url("/index.html"), site.url("/static1.html"), site.url("/c.html"))

	home := out[site.url("/index.html")].rec
	if errCode(home) != CodeRender || num(home, "status") != 200 || str(home, "title") != "Loading…" || home.Has("rendered") {
		t.Errorf("page rendered by a killed browser: want raw fields and a render error, got %s", home.AppendJSON(nil))
	}
	if !strings.Contains(str(home, "error"), "rendering failed") {
		t.Errorf("error %q does not say rendering failed", str(home, "error"))
	}
	if b.Restarts() != 1 {
		t.Errorf("browser restarts %d, want 1", b.Restarts())
	}

	c := out[site.url("/c.html")].rec
	var links []string
	c.Decode("links", &links)
	if got, want := strings.Join(links, " "), site.url("/f.html"); got != want || str(c, "title") != "Page C" || errCode(c) != "" {
		t.Errorf("/c.html rendered: links %q title %q error %q; want %s and Page C", got, str(c, "title"), str(c, "error"), want)
	}
	raw, err := os.ReadFile(filepath.Join("..", "..", "testdata", "jssite", "c.html"))
	if err != nil {
		t.Fatal(err)
	}
	if _, why := render.Shell(raw); str(c, "render_reason") != why || why == "" {
		t.Errorf("/c.html render_reason %q, want the rule's reason %q", str(c, "render_reason"), why)
	}
	if ok, _, _ := c.Bool("rendered"); !ok || num(c, "render_subrequests") != 2 || num(c, "render_blocked") != 1 {
		t.Errorf("/c.html: %s", c.AppendJSON(nil))
	}
	if static := out[site.url("/static1.html")].rec; static.Has("rendered") || errCode(static) != "" {
		t.Errorf("a static page was rendered: %s", static.AppendJSON(nil))
	}
	if n := site.requested("/private/tracker.js"); n != 0 {
		t.Errorf("the script robots.txt disallows was requested %d times", n)
	}
	if st.Render.Pages != 1 || st.Render.Failed != 1 || st.Render.Subrequests < 2 || st.Render.Blocked < 1 {
		t.Errorf("render stats %+v", st.Render)
	}
}

// runFetchStats is runFetch that also returns the run's stats.
func runFetchStats(t *testing.T, cfg Config, st *Stats, inputs ...string) map[string]emitted {
	t.Helper()
	var mu sync.Mutex
	out := map[string]emitted{}
	cfg.Emit = func(r *record.Record) error {
		r2, err := record.Parse(r.AppendJSON(nil))
		if err != nil {
			return err
		}
		mu.Lock()
		defer mu.Unlock()
		out[r.URL()] = emitted{r2, time.Now()}
		return nil
	}
	cfg.EmitRaw = func(line []byte) error {
		r, err := record.Parse(line)
		if err != nil {
			return err
		}
		return cfg.Emit(r)
	}
	f, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	err = f.Run(ctx, func(add func(*record.Record) error) error {
		for _, in := range inputs {
			r, err := record.Parse([]byte(in))
			if err != nil {
				return err
			}
			if err := add(r); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != len(inputs) {
		t.Fatalf("%d records for %d URLs", len(out), len(inputs))
	}
	*st = f.Stats()
	return out
}

// TestRenderArchive archives a rendered page: its response, its DOM as a
// conversion record referring to it, and with RenderArchive the responses
// the browser got.
func TestRenderArchive(t *testing.T) {
	b := startBrowser(t)
	site := newHost(t, "127.0.0.1", http.FileServer(http.Dir(filepath.Join("..", "..", "testdata", "jssite"))))
	dir := t.TempDir()
	w, err := warc.Create(warc.Options{Dir: dir, Prefix: "render"})
	if err != nil {
		t.Fatal(err)
	}
	cfg := testConfig()
	cfg.Render, cfg.Renderer, cfg.RenderArchive, cfg.WARC = render.Auto, b, true, w
	var st Stats
	out := runFetchStats(t, cfg, &st, site.url("/c.html"))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r := out[site.url("/c.html")].rec
	files, _ := filepath.Glob(filepath.Join(dir, "*.warc.gz"))
	if len(files) != 1 {
		t.Fatalf("WARC files %v", files)
	}
	conv, err := warc.ReadAt(files[0], int64(num(r, "render_warc_offset")))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(conv.Body)
	if conv.Type() != warc.TypeConversion || !strings.Contains(string(body), "velvetpangolin") {
		t.Fatalf("render_warc_offset: a %s record:\n%s", conv.Type(), body)
	}
	refersTo := conv.Header.Get("WARC-Refers-To")
	resp, err := warc.ReadAt(files[0], int64(num(r, "warc_offset")))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Header.Get(warc.FieldRecordID) != refersTo || resp.Type() != warc.TypeResponse {
		t.Errorf("the conversion record refers to %s, the page's response is %s", refersTo, resp.Header.Get(warc.FieldRecordID))
	}
	f, err := os.Open(files[0])
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rd, err := warc.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	responses := map[string]bool{}
	for {
		rec, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if rec.Type() == warc.TypeResponse {
			responses[strings.TrimPrefix(rec.TargetURI(), site.url(""))] = true
		}
	}
	for _, p := range []string{"/c.html", "/app.js", "/api/c.json", "/robots.txt"} {
		if !responses[p] {
			t.Errorf("no response record for %s: %v", p, responses)
		}
	}
	if responses["/private/tracker.js"] {
		t.Error("the disallowed script is archived")
	}
	// warcio, an independent reader, reads the same: the conversion record
	// and its reference to the page's response, the browser's responses.
	var conversions int
	theirs := warcioRead(t, files)
	for _, l := range theirs {
		if l.Type == "conversion" {
			conversions++
			if l.RefersTo != refersTo || !strings.HasPrefix(l.ContentType, "text/html") {
				t.Errorf("warcio reads the conversion record as %+v; want it to refer to %s", l, refersTo)
			}
		}
	}
	if conversions != 1 || len(theirs) < 4 {
		t.Errorf("warcio read %d records, %d conversion records; want the page's, its conversion and the browser's", len(theirs), conversions)
	}
}

// TestRenderRefusesPrivateSubrequests: without AllowPrivate, a page on a
// public address (through a proxy on loopback, as TestProxy) is rendered,
// and its script on a host that resolves to a private address is refused
// before any request: the proxy never sees it, the page's DOM lacks what it
// would write, and the refusal is counted.
func TestRenderRefusesPrivateSubrequests(t *testing.T) {
	b := startBrowser(t)
	var mu sync.Mutex
	var asked []string
	p := newHost(t, "127.0.0.76", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		asked = append(asked, r.URL.String())
		mu.Unlock()
		switch r.URL.String() {
		case "http://site.test/page.html":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			io.WriteString(w, `<!DOCTYPE html><html><head><title>Shell</title></head><body><div id="app"></div>`+
				`<script src="http://site.test/ok.js"></script><script src="http://inside.test/evil.js"></script></body></html>`)
		case "http://site.test/ok.js":
			w.Header().Set("Content-Type", "application/javascript")
			io.WriteString(w, `document.getElementById("app").innerHTML = '<a href="/found.html">okwords</a>';`)
		case "http://inside.test/evil.js":
			w.Header().Set("Content-Type", "application/javascript")
			io.WriteString(w, `document.body.insertAdjacentHTML("beforeend", "<p>insidesecret</p>");`)
		default:
			http.NotFound(w, r)
		}
	}))
	cfg := testConfig()
	cfg.IgnoreRobots = true // the address check alone refuses
	cfg.AllowPrivate = false
	cfg.Proxy = "http://" + p.addr
	cfg.LookupIP = lookupMap(map[string]string{"site.test": "93.184.216.34", "inside.test": "10.0.0.5"})
	cfg.Render = render.Auto
	cfg.Renderer = b
	var st Stats
	out := runFetchStats(t, cfg, &st, "http://site.test/page.html")
	rec := out["http://site.test/page.html"].rec
	var links []string
	rec.Decode("links", &links)
	if ok, _, _ := rec.Bool("rendered"); !ok || strings.Join(links, " ") != "http://site.test/found.html" || num(rec, "render_blocked") != 1 || num(rec, "render_subrequests") != 1 {
		t.Errorf("want the page rendered with ok.js's link, inside.test's script refused: %s", rec.AppendJSON(nil))
	}
	mu.Lock()
	defer mu.Unlock()
	for _, u := range asked {
		if strings.Contains(u, "inside.test") {
			t.Errorf("the proxy was asked for %s, on a private address", u)
		}
	}
	if st.Render.Blocked != 1 || st.Render.Subrequests != 1 {
		t.Errorf("render stats %+v: want 1 subrequest and 1 refused", st.Render)
	}
}
