package serve_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sekitei/crawlkit/pkg/barrel"
	"github.com/sekitei/crawlkit/pkg/barrel/serve"
)

var pages = []struct{ url, title, body string }{
	{"http://docs.test/json.html", "json encoder and decoder", "<h1>json</h1><p>The json module encodes the data of a program.</p>"},
	{"http://docs.test/roses.html", "Growing roses", "<p>Roses in a rock garden: gravel and moss, and roses &lt;script&gt;alert(1)&lt;/script&gt; again.</p>"},
	{"http://docs.test/moss.html", "Moss", "<p>Moss grows in the garden between stones and gravel.</p>"},
	{"http://docs.test/ru.html", "Сад камней", "<p>Камни и мох в саду, гравий.</p>"},
}

// testServer serves a small index on a loopback listener.
func testServer(t *testing.T) (*httptest.Server, *barrel.Index, *bytes.Buffer) {
	t.Helper()
	dir := t.TempDir()
	b, err := barrel.NewBuilder(dir, barrel.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pages {
		html := "<html><head><title>" + p.title + "</title></head><body>" + p.body + "</body></html>"
		if err := b.Add(p.url, []byte(html)); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	b.Close()
	idx, err := barrel.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	srv := httptest.NewServer(serve.Handler(idx, serve.Options{MaxN: 50, ErrorLog: &log}))
	t.Cleanup(func() { srv.Close(); idx.Close() })
	if !strings.HasPrefix(srv.URL, "http://127.0.0.1:") {
		t.Fatalf("server at %s, want loopback", srv.URL)
	}
	return srv, idx, &log
}

func get(t *testing.T, u string) (int, string, []byte) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header.Get("Content-Type"), body
}

func search(t *testing.T, srv *httptest.Server, q string, n string) serve.Answer {
	t.Helper()
	v := url.Values{"q": {q}}
	if n != "" {
		v.Set("n", n)
	}
	status, ct, body := get(t, srv.URL+"/search?"+v.Encode())
	if status != http.StatusOK || !strings.HasPrefix(ct, "application/json") {
		t.Fatalf("q=%.40q: status %d, %s: %s", q, status, ct, body)
	}
	var a serve.Answer
	if err := json.Unmarshal(body, &a); err != nil {
		t.Fatalf("q=%.40q: %v: %s", q, err, body)
	}
	return a
}

func urls(a serve.Answer) []string {
	var out []string
	for _, h := range a.Results {
		out = append(out, h.URL)
	}
	return out
}

func TestSearchJSON(t *testing.T) {
	srv, idx, _ := testServer(t)
	a := search(t, srv, "json encoder", "")
	if len(a.Results) != 1 || a.Results[0].URL != pages[0].url || a.Results[0].Position != 1 || a.N != serve.DefaultN {
		t.Fatalf("json encoder: %+v", a)
	}
	if !strings.Contains(a.Results[0].Snippet, "<b>json</b>") || a.Results[0].Title != pages[0].title || len(a.Problems) != 0 {
		t.Errorf("json encoder: %+v", a.Results[0])
	}
	// The same answer as the Go API's.
	want, err := idx.Search("gravel", barrel.SearchOptions{N: 10})
	if err != nil {
		t.Fatal(err)
	}
	a = search(t, srv, "gravel", "")
	if len(a.Results) != len(want.Results) || len(a.Results) != 2 {
		t.Fatalf("gravel: %v, want %d results", urls(a), len(want.Results))
	}
	for i, r := range want.Results {
		if a.Results[i].URL != r.URL || a.Results[i].DocID != r.Doc || a.Results[i].Snippet != r.Snippet {
			t.Errorf("gravel result %d: %+v, want %+v", i, a.Results[i], r)
		}
	}
	if a = search(t, srv, "gravel", "1"); len(a.Results) != 1 || a.Results[0].URL != want.Results[0].URL {
		t.Errorf("gravel n=1: %v", urls(a))
	}
	if a = search(t, srv, "гравий", ""); len(a.Results) != 1 || a.Results[0].URL != pages[3].url {
		t.Errorf("гравий: %v", urls(a))
	}
}

// Bad queries are answered (empty or clipped) with their problems; only a
// malformed n is refused.
func TestBadQueries(t *testing.T) {
	srv, _, log := testServer(t)
	for _, tc := range []struct {
		q, n    string
		results int
		problem string
	}{
		{"", "", 0, "empty query"},
		{"   ", "", 0, "empty query"},
		{"?!;--", "", 0, "only punctuation"},
		{"gravel \xff\xfe", "", 2, "invalid UTF-8"},
		{strings.Repeat("gravel moss ", 5000), "", 2, "10000 terms, clipped to the first 32"},
		{"gravel", "1000", 2, "n=1000, clipped to 50"},
	} {
		a := search(t, srv, tc.q, tc.n)
		if len(a.Results) != tc.results || !strings.Contains(strings.Join(a.Problems, "; "), tc.problem) {
			t.Errorf("q=%.30q n=%q: %d results, problems %q; want %d and %q", tc.q, tc.n, len(a.Results), a.Problems, tc.results, tc.problem)
		}
	}
	// A word in no page is reported; the other words still search.
	a := search(t, srv, "gravel zzyzx", "")
	if len(a.Results) != 2 || len(a.Unknown) != 1 || a.Unknown[0] != "zzyzx" {
		t.Errorf("unknown word: %+v", a)
	}
	for _, n := range []string{"0", "-3", "ten", "1e3"} {
		status, _, body := get(t, srv.URL+"/search?q=gravel&n="+n)
		if status != http.StatusBadRequest || !strings.Contains(string(body), `"error":`) {
			t.Errorf("n=%s: status %d: %s", n, status, body)
		}
	}
	if log.Len() > 0 {
		t.Errorf("errors logged: %s", log)
	}
}

func TestRoutes(t *testing.T) {
	srv, _, _ := testServer(t)
	status, ct, body := get(t, srv.URL+"/healthz")
	if status != http.StatusOK || !strings.HasPrefix(ct, "application/json") || !strings.Contains(string(body), `"status":"ok"`) ||
		!strings.Contains(string(body), fmt.Sprintf(`"pages":%d`, len(pages))) {
		t.Errorf("/healthz: %d %s %s", status, ct, body)
	}
	if status, _, _ := get(t, srv.URL+"/nothing"); status != http.StatusNotFound {
		t.Errorf("/nothing: status %d", status)
	}
	resp, err := http.Post(srv.URL+"/search?q=gravel", "text/plain", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST /search: status %d", resp.StatusCode)
	}
}

func TestPage(t *testing.T) {
	srv, _, _ := testServer(t)
	status, ct, body := get(t, srv.URL+"/")
	if status != http.StatusOK || !strings.HasPrefix(ct, "text/html") || !strings.Contains(string(body), `<form method="get" action="/"`) ||
		strings.Contains(string(body), `id="results"`) {
		t.Fatalf("/: %d %s %s", status, ct, body)
	}
	status, _, body = get(t, srv.URL+"/?q=gravel")
	page := string(body)
	if status != http.StatusOK || strings.Count(page, `<li class="hit">`) != 2 || !strings.Contains(page, `href="`+pages[1].url+`"`) ||
		!strings.Contains(page, `value="gravel"`) {
		t.Fatalf("/?q=gravel: %d\n%s", status, page)
	}
	// The page text is escaped; only the searcher's marks stay markup.
	if strings.Contains(page, "<script>alert") || !strings.Contains(page, "&lt;script&gt;alert(1)&lt;/script&gt;") ||
		!strings.Contains(page, "<b>gravel</b>") {
		t.Errorf("snippet not escaped or not marked:\n%s", page)
	}
	_, _, body = get(t, srv.URL+"/?q=zzyzx")
	if !strings.Contains(string(body), `id="none"`) || !strings.Contains(string(body), "Not in the index: zzyzx") {
		t.Errorf("/?q=zzyzx:\n%s", body)
	}
	status, _, body = get(t, srv.URL+"/?q=gravel&n=x")
	if status != http.StatusBadRequest || !strings.Contains(string(body), `id="error"`) {
		t.Errorf("/?n=x: %d\n%s", status, body)
	}
}

// Many clients at once get the answers one client gets (run with -race
// to check the index's own guards too).
func TestConcurrentSearches(t *testing.T) {
	srv, _, _ := testServer(t)
	queries := []string{"gravel", "json encoder", "moss", "roses", "garden", "гравий", "json", "stones"}
	want := map[string][]string{}
	for _, q := range queries {
		want[q] = urls(search(t, srv, q, ""))
		if len(want[q]) == 0 {
			t.Fatalf("%s: no results", q)
		}
	}
	var wg sync.WaitGroup
	errs := make(chan string, 1000)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 40 {
				q := queries[(g+i)%len(queries)]
				resp, err := http.Get(srv.URL + "/search?" + url.Values{"q": {q}}.Encode())
				if err != nil {
					errs <- err.Error()
					return
				}
				var a serve.Answer
				err = json.NewDecoder(resp.Body).Decode(&a)
				resp.Body.Close()
				if err != nil || fmt.Sprint(urls(a)) != fmt.Sprint(want[q]) {
					errs <- fmt.Sprintf("%s: %v %v, want %v", q, err, urls(a), want[q])
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// The search page works in a browser without typing: headless chromium
// loads /?q=gravel and the DOM it built lists the hits with their marked
// snippets.
func TestPageInChromium(t *testing.T) {
	srv, _, _ := testServer(t)
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatal("chromium is needed (scripts/deps.sh installs it):", err)
	}
	dom := chromiumDOM(t, chromium, srv.URL+"/?q=gravel")
	hits := regexp.MustCompile(`(?s)<li class="hit"><a href="([^"]+)">([^<]*)</a>.*?<p class="snippet">(.*?)</p></li>`).FindAllStringSubmatch(string(dom), -1)
	if len(hits) != 2 {
		t.Fatalf("the rendered page shows %d hits, want 2:\n%s", len(hits), dom)
	}
	got := map[string]bool{}
	for _, h := range hits {
		got[h[1]] = true
		if !strings.Contains(h[3], "<b>gravel</b>") {
			t.Errorf("hit %s: snippet %q has no marked query word", h[1], h[3])
		}
	}
	if !got[pages[1].url] || !got[pages[2].url] {
		t.Errorf("hits %v, want %s and %s", got, pages[1].url, pages[2].url)
	}
	if !regexp.MustCompile(`<input [^>]*name="q"[^>]*value="gravel"`).Match(dom) {
		t.Errorf("the form does not show the query:\n%s", dom)
	}
}

// chromiumDOM loads u in headless chromium, with a fresh profile, and
// returns the DOM it built.
func chromiumDOM(t *testing.T, chromium, u string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	home := t.TempDir()
	cmd := exec.CommandContext(ctx, chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir="+home, "--dump-dom", u)
	cmd.Env = append(os.Environ(), "HOME="+home)
	cmd.Dir = home
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	dom, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium: %v\n%s", err, stderr.String())
	}
	return dom
}

// The query syntax and the pages of results in a browser: chromium
// follows the page's own next and previous links, and shows a malformed
// query's error and the syntax help.
func TestPagingAndSyntaxInChromium(t *testing.T) {
	srv, _, _ := testServer(t)
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatal("chromium is needed (scripts/deps.sh installs it):", err)
	}
	hitRe := regexp.MustCompile(`<li class="hit"><a href="([^"]+)">`)
	hrefOf := func(dom []byte, id string) string {
		m := regexp.MustCompile(`<a id="` + id + `" href="([^"]+)">`).FindSubmatch(dom)
		if m == nil {
			return ""
		}
		return html.UnescapeString(string(m[1]))
	}
	all := urls(search(t, srv, "garden", ""))
	if len(all) != 2 {
		t.Fatalf("garden: %v, want 2 pages", all)
	}
	dom := chromiumDOM(t, chromium, srv.URL+"/?q=garden&n=1")
	hits := hitRe.FindAllSubmatch(dom, -1)
	if len(hits) != 1 || string(hits[0][1]) != all[0] || !bytes.Contains(dom, []byte("1–1 of 2 matches")) {
		t.Fatalf("page 1 of garden, n=1:\n%s", dom)
	}
	if !bytes.Contains(dom, []byte(`id="help"`)) || !bytes.Contains(dom, []byte("site:host")) {
		t.Errorf("no syntax help line:\n%s", dom)
	}
	next := hrefOf(dom, "next")
	if next == "" || hrefOf(dom, "prev") != "" {
		t.Fatalf("page 1: next %q, and a previous link:\n%s", next, dom)
	}
	dom = chromiumDOM(t, chromium, srv.URL+next)
	hits = hitRe.FindAllSubmatch(dom, -1)
	if len(hits) != 1 || string(hits[0][1]) != all[1] || !bytes.Contains(dom, []byte("2–2 of 2 matches")) ||
		!bytes.Contains(dom, []byte(`<ol id="results" start="2">`)) {
		t.Fatalf("page 2 (%s):\n%s", next, dom)
	}
	if hrefOf(dom, "next") != "" || hrefOf(dom, "prev") == "" {
		t.Fatalf("page 2: want a previous link and no next:\n%s", dom)
	}
	dom = chromiumDOM(t, chromium, srv.URL+hrefOf(dom, "prev"))
	if hits = hitRe.FindAllSubmatch(dom, -1); len(hits) != 1 || string(hits[0][1]) != all[0] {
		t.Fatalf("back to page 1:\n%s", dom)
	}
	// -word, site: and a phrase, typed as a person types them.
	q := url.Values{"q": {`garden -roses`}}.Encode()
	if hits = hitRe.FindAllSubmatch(chromiumDOM(t, chromium, srv.URL+"/?"+q), -1); len(hits) != 1 || string(hits[0][1]) != pages[2].url {
		t.Errorf("garden -roses: %q", hits)
	}
	q = url.Values{"q": {`"rock garden" site:docs.test`}}.Encode()
	if hits = hitRe.FindAllSubmatch(chromiumDOM(t, chromium, srv.URL+"/?"+q), -1); len(hits) != 1 || string(hits[0][1]) != pages[1].url {
		t.Errorf(`"rock garden" site:docs.test: %q`, hits)
	}
	q = url.Values{"q": {`"rock garden site:docs.test`}}.Encode()
	dom = chromiumDOM(t, chromium, srv.URL+"/?"+q)
	if !bytes.Contains(dom, []byte(`<p class="note">query: unbalanced quote`)) || hitRe.Match(dom) {
		t.Errorf("unbalanced quote: no error shown:\n%s", dom)
	}
}

// The JSON API takes start and the query syntax; a malformed query is
// answered with its error, a bad start refused.
func TestStartAndSyntaxJSON(t *testing.T) {
	srv, _, _ := testServer(t)
	all := urls(search(t, srv, "garden", ""))
	status, _, body := get(t, srv.URL+"/search?q=garden&n=1&start=1")
	var a serve.Answer
	if err := json.Unmarshal(body, &a); err != nil || status != http.StatusOK {
		t.Fatalf("start=1: %d %v %s", status, err, body)
	}
	if len(a.Results) != 1 || a.Results[0].URL != all[1] || a.Results[0].Position != 2 || a.Start != 1 {
		t.Errorf("start=1: %+v, want %s at position 2", a, all[1])
	}
	for _, bad := range []string{"-1", "x", "40001"} {
		if status, _, body := get(t, srv.URL+"/search?q=garden&start="+bad); status != http.StatusBadRequest || !strings.Contains(string(body), "start=") {
			t.Errorf("start=%s: %d %s", bad, status, body)
		}
	}
	a = search(t, srv, "gravel -stones", "")
	if got := urls(a); len(got) != 1 || got[0] != pages[1].url {
		t.Errorf("gravel -stones: %v", got)
	}
	for q, want := range map[string]string{`"gravel`: "unbalanced quote", `-gravel`: "only excluded words", `gravel OR`: "OR needs a word after it"} {
		a = search(t, srv, q, "")
		if len(a.Results) != 0 || len(a.Problems) != 1 || !strings.Contains(a.Problems[0], want) {
			t.Errorf("%s: %+v, want the problem %q", q, a, want)
		}
	}
}

// A server on a Live index answers from each new generation a build
// commits, and the searches of the old one finish on it.
func TestLiveFollowsBuilds(t *testing.T) {
	dir := t.TempDir()
	add := func(u, html string) {
		b, err := barrel.NewBuilder(dir, barrel.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		if err := b.Add(u, []byte(html)); err != nil {
			t.Fatal(err)
		}
		if err := b.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	add("http://docs.test/a.html", "<html><head><title>Gravel paths</title></head><body><p>Gravel and sand.</p></body></html>")
	var log bytes.Buffer
	live, err := serve.OpenLive(dir, &log)
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	srv := httptest.NewServer(serve.LiveHandler(live, serve.Options{ErrorLog: &log}))
	defer srv.Close()
	if a := search(t, srv, "gravel", ""); len(a.Results) != 1 {
		t.Fatalf("before the build: %v", urls(a))
	}
	held, release := live.Acquire() // a search in flight across the build
	for i := range 3 {
		add(fmt.Sprintf("http://docs.test/b%d.html", i), "<html><head><title>Moss</title></head><body><p>Moss on gravel, and basalt.</p></body></html>")
		if a := search(t, srv, "gravel", ""); len(a.Results) != 2+i {
			t.Fatalf("after build %d: %v", i+1, urls(a))
		}
	}
	if a := search(t, srv, "basalt", ""); len(a.Results) != 3 {
		t.Errorf("basalt: %v", urls(a))
	}
	if _, err := held.Search("gravel", barrel.SearchOptions{N: 1, NoSnippets: true}); err != nil {
		t.Errorf("the generation held across the builds: %v", err)
	}
	release()
	if status, _, body := get(t, srv.URL+"/healthz"); status != http.StatusOK || !strings.Contains(string(body), `"batches":4`) {
		t.Errorf("/healthz after 4 batches: %d %s", status, body)
	}
	if log.Len() > 0 {
		t.Errorf("logged: %s", log.String())
	}
}
