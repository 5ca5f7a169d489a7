package sitemap

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"
)

func collect(t *testing.T, data []byte, lim Limits) (string, []Entry, error) {
	t.Helper()
	kind, es, _, err := collectWarn(t, data, lim)
	return kind, es, err
}

// collectWarn also returns what Parse reported.
func collectWarn(t *testing.T, data []byte, lim Limits) (string, []Entry, []string, error) {
	t.Helper()
	var es []Entry
	var warns []string
	kind, err := Parse(bytes.NewReader(data), lim, func(_ string, e Entry) error {
		es = append(es, e)
		return nil
	}, func(s string) { warns = append(warns, s) })
	return kind, es, warns, err
}

const urlset = `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
  <url><loc>http://s.test/a</loc><lastmod>2026-11-20</lastmod><changefreq>Daily</changefreq><priority>0.8</priority></url>
  <url><loc> http://s.test/b?x=1&amp;y=2 </loc><lastmod>2026-11-20T10:30:00+03:00</lastmod></url>
  <url><loc>http://s.test/c</loc><lastmod>yesterday</lastmod><changefreq>sometimes</changefreq><priority>7</priority></url>
  <url><lastmod>2026-01-01</lastmod></url>
</urlset>`

func TestParseURLSet(t *testing.T) {
	kind, es, warns, err := collectWarn(t, []byte(urlset), Limits{})
	if err != nil || kind != KindURLSet || len(es) != 3 {
		t.Fatalf("%s %v %+v", kind, err, es)
	}
	// The third entry's three bad values and the fourth's missing <loc>
	// are reported; the entries around them are read.
	wantWarns := []string{
		`url 3: lastmod "yesterday" is not a W3C date-time: ignored`,
		`url 3: changefreq "sometimes" is not always, hourly, daily, weekly, monthly, yearly or never: ignored`,
		`url 3: priority "7" is not a number from 0.0 to 1.0: ignored`,
		`url 4: no <loc>: skipped`,
	}
	if strings.Join(warns, "\n") != strings.Join(wantWarns, "\n") {
		t.Errorf("reported:\n%s\nwant:\n%s", strings.Join(warns, "\n"), strings.Join(wantWarns, "\n"))
	}
	want := []Entry{
		{Loc: "http://s.test/a", LastMod: "2026-11-20T00:00:00.000Z", ChangeFreq: "daily", Priority: 0.8},
		{Loc: "http://s.test/b?x=1&y=2", LastMod: "2026-11-20T07:30:00.000Z", Priority: -1},
		{Loc: "http://s.test/c", Priority: -1},
	}
	for i := range want {
		if es[i] != want[i] {
			t.Errorf("entry %d: %+v, want %+v", i, es[i], want[i])
		}
	}
}

func TestParseKinds(t *testing.T) {
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(urlset))
	zw.Close()
	if kind, es, err := collect(t, gz.Bytes(), Limits{}); kind != KindURLSet || len(es) != 3 || err != nil {
		t.Errorf("gzipped: %s %d %v", kind, len(es), err)
	}
	index := `<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><sitemap><loc>http://s.test/s1.xml</loc><lastmod>2026-11-01</lastmod></sitemap></sitemapindex>`
	if kind, es, err := collect(t, []byte(index), Limits{}); kind != KindIndex || len(es) != 1 || es[0].LastMod != "2026-11-01T00:00:00.000Z" || err != nil {
		t.Errorf("index: %s %+v %v", kind, es, err)
	}
	text := "\xEF\xBB\xBFhttp://s.test/1\r\n\nnot a url\nhttps://s.test/2\n"
	if kind, es, warns, err := collectWarn(t, []byte(text), Limits{}); kind != KindText || len(es) != 2 || es[1].Loc != "https://s.test/2" || err != nil ||
		len(warns) != 1 || warns[0] != `line 3: "not a url" is not an http(s) URL: skipped` {
		t.Errorf("text: %s %+v %v %q", kind, es, err, warns)
	}
	for _, bad := range []string{"", "<html><body>hello</body></html>", "<urlset><url><loc>http://s.test/x</loc></url><url><loc>"} {
		kind, es, err := collect(t, []byte(bad), Limits{})
		if err == nil {
			t.Errorf("%q: no error (%s, %d entries)", bad, kind, len(es))
		}
	}
}

func TestLimits(t *testing.T) {
	var b strings.Builder
	b.WriteString("<urlset>")
	for i := 0; i < 100; i++ {
		fmt.Fprintf(&b, "<url><loc>http://s.test/%d</loc></url>", i)
	}
	b.WriteString("</urlset>")
	if _, es, err := collect(t, []byte(b.String()), Limits{URLs: 10}); !errors.Is(err, ErrTooMany) || len(es) != 10 {
		t.Errorf("10 URLs: %d, %v", len(es), err)
	}
	if _, es, err := collect(t, []byte(b.String()), Limits{Bytes: 1000}); !errors.Is(err, ErrTooLarge) || len(es) == 0 || len(es) > 30 {
		t.Errorf("1000 bytes: %d, %v", len(es), err)
	}
	// A gzip bomb: 64 MiB of spaces inside a urlset, 64 KiB compressed,
	// stopped at the protocol's 50 MB.
	var gz bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	zw.Write([]byte("<urlset><url><loc>http://s.test/x</loc></url>"))
	space := bytes.Repeat([]byte(" "), 1<<20)
	for i := 0; i < 64; i++ {
		zw.Write(space)
	}
	zw.Close()
	if _, es, err := collect(t, gz.Bytes(), Limits{}); !errors.Is(err, ErrTooLarge) || len(es) != 1 {
		t.Errorf("gzip bomb: %d entries, %v", len(es), err)
	}
}

func TestAllowed(t *testing.T) {
	const rs = "http://s.test/robots.txt"
	for _, c := range []struct {
		sm, loc, robots string
		want            bool
	}{
		{"http://s.test/sitemap.xml", "http://s.test/a/b", "", true},
		{"http://S.test:80/sitemap.xml", "http://s.test/a", "", true},
		{"http://s.test/news/sitemap.xml", "http://s.test/a", "", false},
		{"http://s.test/news/sitemap.xml", "http://s.test/a", rs, true},
		{"http://s.test/news/sitemap.xml", "http://s.test/news/1", "", true},
		{"http://s.test/sitemap.xml", "http://other.test/a", rs, false},
		{"http://s.test/sitemap.xml", "https://s.test/a", "", false},
		{"http://s.test/sitemap.xml", "javascript:alert(1)", "", false},
		// Cross-submission: s.test's robots.txt names a sitemap on cdn.test.
		{"http://cdn.test/maps/s.xml", "http://s.test/any/page", rs, true},
		{"http://cdn.test/maps/s.xml", "https://s.test/any/page", rs, false},
		{"http://cdn.test/maps/s.xml", "http://s.test/any/page", "", false},
		{"http://cdn.test/maps/s.xml", "http://cdn.test/maps/x", rs, true},
		{"http://cdn.test/maps/s.xml", "http://cdn.test/other/x", rs, false},
		{"http://cdn.test/maps/s.xml", "http://third.test/x", rs, false},
	} {
		if got := Allowed(c.sm, c.loc, c.robots); got != c.want {
			t.Errorf("%s lists %s (robots.txt %q): %v", c.sm, c.loc, c.robots, got)
		}
	}
}

// httpGetter is a plain Getter over net/http, for a real loopback site.
type httpGetter struct{ asked []string }

func (g *httpGetter) Get(ctx context.Context, u string) (int, []byte, error) {
	g.asked = append(g.asked, u)
	resp, err := http.Get(u)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, MaxBytes))
	return resp.StatusCode, b, err
}

func TestDiscover(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.81:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	files := map[string]string{
		"/robots.txt":  "User-agent: *\nDisallow:\nSitemap: " + base + "/index.xml\nSitemap: " + base + "/list.txt\n",
		"/index.xml":   `<sitemapindex><sitemap><loc>` + base + `/news/s1.xml</loc></sitemap><sitemap><loc>` + base + `/index.xml</loc></sitemap><sitemap><loc>` + base + `/nested.xml</loc></sitemap><sitemap><loc>http://elsewhere.test/s.xml</loc></sitemap><sitemap><loc>` + base + `/missing.xml</loc></sitemap><sitemap><loc>` + base + `/page.html</loc></sitemap></sitemapindex>`,
		"/news/s1.xml": `<urlset><url><loc>` + base + `/only-in-sitemap</loc><lastmod>2026-11-20</lastmod><changefreq>hourly</changefreq><priority>0.9</priority></url><url><loc>http://elsewhere.test/x</loc></url><url><loc>` + base + `/top</loc></url></urlset>`,
		"/nested.xml":  `<sitemapindex><sitemap><loc>` + base + `/news/s1.xml</loc></sitemap></sitemapindex>`,
		"/list.txt":    base + "/from-text\n",
		"/page.html":   "<html><body>not a sitemap</body></html>",
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if body, ok := files[r.URL.Path]; ok {
			io.WriteString(w, body)
			return
		}
		http.NotFound(w, r)
	})}
	go srv.Serve(ln)
	defer srv.Close()

	g := &httpGetter{}
	var warns []string
	var found []Found
	err = Discover(context.Background(), g, base+"/", Options{Warn: func(s string) { warns = append(warns, s) }},
		func(f Found) error { found = append(found, f); return nil })
	if err != nil {
		t.Fatal(err)
	}
	var locs []string
	for _, f := range found {
		locs = append(locs, f.Loc)
	}
	// /top is under the root, allowed because robots.txt named the index.
	if want := []string{base + "/only-in-sitemap", base + "/top", base + "/from-text"}; strings.Join(locs, " ") != strings.Join(want, " ") {
		t.Errorf("found %q, want %q", locs, want)
	}
	if found[0].LastMod != "2026-11-20T00:00:00.000Z" || found[0].ChangeFreq != "hourly" || found[0].Priority != 0.9 || found[0].Sitemap != base+"/news/s1.xml" {
		t.Errorf("first: %+v", found[0])
	}
	all := strings.Join(warns, "\n")
	for _, w := range []string{"elsewhere.test/s.xml of another site", "index.xml: listed again", "nested.xml: an index inside an index",
		"missing.xml: status 404", "page.html: not a sitemap", "elsewhere.test/x of another site"} {
		if !strings.Contains(all, w) {
			t.Errorf("no warning %q in:\n%s", w, all)
		}
	}
	for _, a := range g.asked {
		if strings.Contains(a, "elsewhere") {
			t.Errorf("asked another host: %s", a)
		}
	}
}
