package sitemap

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sekitei/crawlkit/pkg/record"
)

// Each file of testdata (see testdata/README.md for sources and licences)
// and what Parse makes of it: the entries and the reports.
func TestFormats(t *testing.T) {
	for _, c := range []struct {
		file, kind string
		want       []Entry
		warns      []string
	}{
		{"sitemaps-org-urlset.xml", KindURLSet, []Entry{
			{Loc: "http://www.example.com/", LastMod: "2005-01-01T00:00:00.000Z", ChangeFreq: "monthly", Priority: 0.8},
			{Loc: "http://www.example.com/catalog?item=12&desc=vacation_hawaii", ChangeFreq: "weekly", Priority: -1},
			{Loc: "http://www.example.com/catalog?item=73&desc=vacation_new_zealand", LastMod: "2004-12-23T00:00:00.000Z", ChangeFreq: "weekly", Priority: -1},
			{Loc: "http://www.example.com/catalog?item=74&desc=vacation_newfoundland", LastMod: "2004-12-23T18:00:15.000Z", Priority: 0.3},
			{Loc: "http://www.example.com/catalog?item=83&desc=vacation_usa", LastMod: "2004-11-23T00:00:00.000Z", Priority: -1},
		}, nil},
		{"sitemaps-org-index.xml", KindIndex, []Entry{
			{Loc: "http://www.example.com/sitemap1.xml.gz", LastMod: "2004-10-01T18:23:17.000Z", Priority: -1},
			{Loc: "http://www.example.com/sitemap2.xml.gz", LastMod: "2005-01-01T00:00:00.000Z", Priority: -1},
		}, nil},
		// <image:loc> inside <url> is the image, never the page.
		{"google-image-sitemap.xml", KindURLSet, []Entry{
			{Loc: "https://example.com/sample1.html", Priority: -1},
			{Loc: "https://example.com/sample2.html", Priority: -1},
		}, nil},
		// Video, news and hreflang extensions before and after <loc>, an
		// undeclared prefix, a <url> whose only loc is a video's, and
		// extension elements named loc and lastmod right under <url>.
		{"video-news-sitemap.xml", KindURLSet, []Entry{
			{Loc: "https://www.example.com/videos/raking.html", LastMod: "2026-11-20T00:00:00.000Z", Priority: -1},
			{Loc: "https://www.example.com/news/moss.html", LastMod: "2026-11-20T10:00:00.000Z", ChangeFreq: "never", Priority: -1},
			{Loc: "https://www.example.com/lanterns.html", Priority: 0.4},
			{Loc: "https://www.example.com/stones.html", Priority: -1},
			{Loc: "https://www.example.com/gate.html", Priority: -1},
		}, []string{"url 4: no <loc>: skipped"}},
		{"rss2.xml", KindRSS, []Entry{
			{Loc: "http://news.example/moss.html", LastMod: "2026-11-20T07:30:00.000Z", Priority: -1},
			{Loc: "http://news.example/gravel.html", LastMod: "2026-11-19T23:00:00.000Z", Priority: -1},
			{Loc: "http://news.example/lanterns.html", Priority: -1},
			{Loc: "http://news.example/stones.html", LastMod: "2026-11-18T09:00:00.000Z", Priority: -1},
			{Loc: "http://news.example/raked.html", LastMod: "2026-11-04T08:15:00.000Z", Priority: -1},
		}, []string{
			`item 3: pubDate "sometime last week" is not an RFC 822 date: ignored`,
			"item 4: no <link>: skipped",
		}},
		{"rss1.xml", KindRDF, []Entry{
			{Loc: "http://news.example/moss.html", LastMod: "2026-11-20T07:30:00.000Z", Priority: -1},
			{Loc: "http://news.example/about-only.html", LastMod: "2026-11-19T00:00:00.000Z", Priority: -1},
			{Loc: "http://news.example/lanterns.html", Priority: -1},
		}, []string{
			`item 3: dc:date "last week" is not a W3C date-time: ignored`,
			"item 4: no <link>: skipped",
		}},
		// Relative links stay as written here; Discover and Read resolve
		// them against the feed's URL.
		{"atom.xml", KindAtom, []Entry{
			{Loc: "http://news.example/moss.html", LastMod: "2026-11-20T07:30:00.000Z", Priority: -1},
			{Loc: "../gravel.html", LastMod: "2026-11-19T23:00:00.000Z", Priority: -1},
			{Loc: "http://news.example/lanterns.html", Priority: -1},
		}, []string{
			`entry 3: no <link rel="alternate">: skipped`,
			`entry 4: updated "November 2026" is not a W3C date-time: ignored`,
		}},
	} {
		data, err := os.ReadFile(filepath.Join("testdata", c.file))
		if err != nil {
			t.Fatal(err)
		}
		kind, es, warns, err := collectWarn(t, data, Limits{})
		if err != nil || kind != c.kind {
			t.Errorf("%s: kind %q, error %v; want %q", c.file, kind, err, c.kind)
		}
		if len(es) != len(c.want) {
			t.Errorf("%s: %d entries, want %d: %+v", c.file, len(es), len(c.want), es)
		}
		for i := 0; i < len(es) && i < len(c.want); i++ {
			if es[i] != c.want[i] {
				t.Errorf("%s: entry %d: %+v, want %+v", c.file, i+1, es[i], c.want[i])
			}
		}
		if strings.Join(warns, "\n") != strings.Join(c.warns, "\n") {
			t.Errorf("%s: reported\n%s\nwant\n%s", c.file, strings.Join(warns, "\n"), strings.Join(c.warns, "\n"))
		}
	}
}

func TestParsePubDate(t *testing.T) {
	for in, want := range map[string]string{
		"Fri, 20 Nov 2026 10:30:00 +0300": "2026-11-20T07:30:00.000Z",
		"Fri, 20 Nov 2026 10:30:00 GMT":   "2026-11-20T10:30:00.000Z",
		"Fri, 20 Nov 2026 10:30:00 UT":    "2026-11-20T10:30:00.000Z",
		"Fri, 20 Nov 2026 10:30:00 PDT":   "2026-11-20T17:30:00.000Z",
		"20 Nov 2026 10:30 -0100":         "2026-11-20T11:30:00.000Z",
		"Fri, 20 Nov 26 10:30:00 CST":     "2026-11-20T16:30:00.000Z",
		"2026-11-20T10:30:00Z":            "2026-11-20T10:30:00.000Z",
		"Friday":                          "",
		"":                                "",
	} {
		got := ""
		if tm, ok := ParsePubDate(in); ok {
			got = record.FormatTime(tm)
		}
		if got != want {
			t.Errorf("ParsePubDate(%q) = %q, want %q", in, got, want)
		}
	}
}

// serveFiles serves files (path to body) on a free port of the loopback
// address ip and returns its base URL; the files may name the base as
// $BASE, filled in once the port is known.
func serveFiles(t *testing.T, ip string, files map[string]string) (string, map[string]string) {
	t.Helper()
	ln, err := net.Listen("tcp", ip+":0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if body, ok := files[r.URL.Path]; ok {
			io.WriteString(w, body)
			return
		}
		http.NotFound(w, r)
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return base, files
}

func testdataFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A site whose robots.txt names a sitemap on a second host (the protocol's
// cross-submission), an image sitemap outside the sitemap's directory, and
// three feeds, all over HTTP on two loopback addresses.
func TestDiscoverCrossHostAndFeeds(t *testing.T) {
	b, bFiles := serveFiles(t, "127.0.0.83", map[string]string{})
	a, aFiles := serveFiles(t, "127.0.0.82", map[string]string{})
	aFiles["/robots.txt"] = "User-agent: *\nDisallow:\nSitemap: " + b + "/maps/a.xml\n" +
		"Sitemap: " + a + "/images/image-sitemap.xml\nSitemap: " + a + "/feeds/rss2.xml\n" +
		"Sitemap: " + a + "/feeds/rss1.xml\nSitemap: " + a + "/feeds/atom.xml\n"
	aFiles["/images/image-sitemap.xml"] = strings.ReplaceAll(testdataFile(t, "google-image-sitemap.xml"), "https://example.com", a)
	for _, f := range []string{"rss2.xml", "rss1.xml", "atom.xml"} {
		aFiles["/feeds/"+f] = strings.ReplaceAll(testdataFile(t, f), "http://news.example", a)
	}
	bFiles["/maps/a.xml"] = `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
<url><loc>` + a + `/deep/page.html</loc><lastmod>2026-11-20</lastmod></url>
<url><loc>` + b + `/maps/own.html</loc></url>
<url><loc>` + b + `/other/x.html</loc></url>
<url><loc>http://third.example/x</loc></url>
</urlset>`

	discover := func(read func(Getter, Options, func(Found) error) error) (map[string]Found, string) {
		var warns []string
		found := map[string]Found{}
		err := read(&httpGetter{}, Options{Warn: func(s string) { warns = append(warns, s) }}, func(f Found) error {
			found[f.Loc] = f
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return found, strings.Join(warns, "\n")
	}
	found, warns := discover(func(g Getter, o Options, fn func(Found) error) error {
		return Discover(context.Background(), g, a+"/", o, fn)
	})
	want := map[string]string{ // URL: the sitemap that listed it
		a + "/deep/page.html":  b + "/maps/a.xml",
		b + "/maps/own.html":   b + "/maps/a.xml",
		a + "/sample1.html":    a + "/images/image-sitemap.xml",
		a + "/sample2.html":    a + "/images/image-sitemap.xml",
		a + "/moss.html":       a + "/feeds/atom.xml", // all three feeds list it; the last read wins here
		a + "/gravel.html":     a + "/feeds/atom.xml",
		a + "/lanterns.html":   a + "/feeds/atom.xml", // and rss2, rss1
		a + "/stones.html":     a + "/feeds/rss2.xml",
		a + "/raked.html":      a + "/feeds/rss2.xml",
		a + "/about-only.html": a + "/feeds/rss1.xml",
	}
	for u, sm := range want {
		if f, ok := found[u]; !ok || f.Sitemap != sm {
			t.Errorf("%s: found %v from %q, want from %s", u, ok, f.Sitemap, sm)
		}
	}
	for u := range found {
		if _, ok := want[u]; !ok {
			t.Errorf("%s found, not listed or refused", u)
		}
	}
	if f := found[a+"/deep/page.html"]; f.LastMod != "2026-11-20T00:00:00.000Z" {
		t.Errorf("cross-host entry: %+v", f)
	}
	for _, w := range []string{
		b + "/maps/a.xml: lists " + b + "/other/x.html of another site or directory: refused",
		b + "/maps/a.xml: lists http://third.example/x of another site or directory: refused",
		a + "/feeds/rss2.xml: item 4: no <link>: skipped",
		a + `/feeds/rss2.xml: item 3: pubDate "sometime last week" is not an RFC 822 date: ignored`,
		a + "/feeds/rss1.xml: item 4: no <link>: skipped",
		a + `/feeds/atom.xml: entry 3: no <link rel="alternate">: skipped`,
	} {
		if !strings.Contains(warns, w) {
			t.Errorf("no report %q in:\n%s", w, warns)
		}
	}
	if strings.Contains(warns, "image.jpg") || strings.Contains(warns, "elsewhere.example") {
		t.Errorf("an extension's or an Atom source's link was read:\n%s", warns)
	}

	// The same sitemap named directly, not vouched for by a robots.txt:
	// only URLs under its own directory on its own host.
	found, warns = discover(func(g Getter, o Options, fn func(Found) error) error {
		return Read(context.Background(), g, b+"/maps/a.xml", o, fn)
	})
	if len(found) != 1 || found[b+"/maps/own.html"].Loc == "" {
		t.Errorf("read directly: %v", found)
	}
	if !strings.Contains(warns, "lists "+a+"/deep/page.html of another site or directory: refused") {
		t.Errorf("the other host's URL not refused:\n%s", warns)
	}
}

// Whatever the bytes, Parse returns, and every entry it delivers has a URL.
func FuzzParse(f *testing.F) {
	for _, name := range []string{"sitemaps-org-urlset.xml", "sitemaps-org-index.xml", "google-image-sitemap.xml",
		"video-news-sitemap.xml", "rss2.xml", "rss1.xml", "atom.xml"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("<feed><entry><link href=''/><entry><link/></entry></feed>"))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _ = Parse(bytes.NewReader(data), Limits{URLs: 100, Bytes: 1 << 20}, func(kind string, e Entry) error {
			if e.Loc == "" {
				t.Fatalf("%s entry without a URL: %+v", kind, e)
			}
			return nil
		}, func(string) {})
	})
}
