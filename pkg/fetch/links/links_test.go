package links

import (
	"reflect"
	"strings"
	"testing"

	"golang.org/x/text/encoding/charmap"
)

func TestExtract(t *testing.T) {
	page := `<!doctype html><html><head>
<title>  Hello &amp;
  World </title>
<base href="http://base.test/dir/">
<base href="http://ignored.test/">
<link rel="canonical" href="/canon#x">
<link rel="stylesheet" href="style.css">
</head><body>
<a href="a.html#frag">a</a>
<a href="a.html">dup</a>
<a href="/abs">abs</a>
<a href="//other.test/p?q=1">proto-relative</a>
<a href="mailto:x@y.z">mail</a><a href="javascript:void(0)">js</a><a href="#top">top</a>
<a href="ftp://f.test/">ftp</a>
<a rel="nofollow noopener" href="nf.html">nf</a>
<area href="map.html"><frame src="frame.html"><iframe src="https://i.test/"></iframe>
<a href="  spaced.html ">s</a>
<script>var s = "<a href='script.html'>";</script>
<title>second title ignored</title>
</body></html>`
	p := Extract([]byte(page), "http://page.test/x/y.html", Options{})
	if p.Title != "Hello & World" {
		t.Errorf("title %q", p.Title)
	}
	want := []string{
		"http://base.test/dir/style.css",
		"http://base.test/dir/a.html",
		"http://base.test/abs",
		"http://other.test/p?q=1",
		"http://base.test/dir/", // "#top" is the base, another page than this one
		"http://base.test/dir/map.html",
		"http://base.test/dir/frame.html",
		"https://i.test/",
		"http://base.test/dir/spaced.html",
	}
	if !reflect.DeepEqual(p.Links, want) {
		t.Errorf("links\n got %q\nwant %q", p.Links, want)
	}
	if !reflect.DeepEqual(p.Nofollow, []string{"http://base.test/dir/nf.html"}) {
		t.Errorf("nofollow %q", p.Nofollow)
	}
	if p.Canonical != "http://base.test/canon" {
		t.Errorf("canonical %q", p.Canonical)
	}
}

// Attribute values are the tokenizer's: a legacy reference without ";"
// before "=" or an alphanumeric stays as written.
func TestAttributeReferences(t *testing.T) {
	page := `<a href="/q?a=1&not=2&copy=3&region=4&section=5&param=6&timestamp=7&currency=8">x</a>
<a href="/r?x&amp;y=&lt;&gt;&#65;&#x42;&notit;&copy">y</a><a href='/s?t&quot;&sect&amp'>z</a>`
	p := Extract([]byte(page), "http://h.test/", Options{})
	want := []string{
		"http://h.test/q?a=1&not=2&copy=3&region=4&section=5&param=6&timestamp=7&currency=8",
		"http://h.test/r?x&y=%3C%3EAB&notit;%C2%A9",
		"http://h.test/s?t%22%C2%A7&",
	}
	if !reflect.DeepEqual(p.Links, want) {
		t.Errorf("links\n got %q\nwant %q", p.Links, want)
	}
	if ref := extractRef([]byte(page), "http://h.test/", Options{}); !reflect.DeepEqual(ref.Links, want) {
		t.Errorf("tokenizer gives %q", ref.Links)
	}
}

// The first <base href> is the document base URL for every link, those
// before it included; later ones and a base inside a comment do not count.
func TestBaseAppliesToAll(t *testing.T) {
	page := `<a href="before.html">b</a><link rel=canonical href="canon"><meta http-equiv=refresh content="5; url=next">
<!-- <base href="http://comment.test/"> --><base target=_top><base href="http://base.test/d/"><base href="http://late.test/">
<a href="after.html">a</a>`
	p := Extract([]byte(page), "http://page.test/x/y.html", Options{})
	want := []string{"http://base.test/d/before.html", "http://base.test/d/next", "http://base.test/d/after.html"}
	if !reflect.DeepEqual(p.Links, want) || p.Canonical != "http://base.test/d/canon" || p.Refresh != "http://base.test/d/next" || p.RefreshDelay != 5 {
		t.Errorf("got %+v, want links %q", p, want)
	}
	// A base of another scheme leaves absolute http(s) links only; one that
	// does not parse leaves the page URL.
	p = Extract([]byte(`<base href="ftp://f.test/"><a href="rel.html"></a><a href="http://abs.test/">`), "http://page.test/", Options{})
	if !reflect.DeepEqual(p.Links, []string{"http://abs.test/"}) {
		t.Errorf("ftp base: %q", p.Links)
	}
	p = Extract([]byte(`<a href="rel.html"></a><base href="http://[bad/"><base href="http://late.test/">`), "http://page.test/d/", Options{})
	if !reflect.DeepEqual(p.Links, []string{"http://page.test/d/rel.html"}) {
		t.Errorf("invalid base: %q", p.Links)
	}
}

// A crawler runs no scripts: noscript content is markup.
func TestNoscript(t *testing.T) {
	page := `<head><noscript><meta http-equiv="refresh" content="0; url=/nojs"></noscript></head>
<body><noscript><a href="/ns.html">ns</a><img src="x"></noscript><script><a href="/no.html"></script></body>`
	p := Extract([]byte(page), "http://h.test/", Options{})
	want := []string{"http://h.test/nojs", "http://h.test/ns.html"}
	if !reflect.DeepEqual(p.Links, want) {
		t.Errorf("links %q, want %q", p.Links, want)
	}
}

// The query of a link is encoded in the page's encoding, its path in UTF-8,
// as the URL Standard says.
func TestQueryEncoding(t *testing.T) {
	page := `<a href="/search?q=привет">s</a><a href="/путь">p</a><a href="http://other.test/?q=й#frag">o</a>`
	p := Extract([]byte(page), "http://h.test/", Options{Encoding: charmap.Windows1251})
	want := []string{
		"http://h.test/search?q=%EF%F0%E8%E2%E5%F2",
		"http://h.test/%D0%BF%D1%83%D1%82%D1%8C",
		"http://other.test/?q=%E9",
	}
	if !reflect.DeepEqual(p.Links, want) {
		t.Errorf("windows-1251: %q, want %q", p.Links, want)
	}
	p = Extract([]byte(page), "http://h.test/", Options{})
	if p.Links[0] != "http://h.test/search?q=%D0%BF%D1%80%D0%B8%D0%B2%D0%B5%D1%82" {
		t.Errorf("utf-8: %q", p.Links[0])
	}
}

func TestMetaRobotsNofollow(t *testing.T) {
	p := Extract([]byte(`<meta name="ROBOTS" content="noindex, NOFOLLOW"><a href="/a">a</a>`), "http://h.test/", Options{})
	if !p.NoFollowPage || !p.NoIndex || len(p.Links) != 0 || len(p.Nofollow) != 1 {
		t.Errorf("%+v", p)
	}
}

func TestLimits(t *testing.T) {
	var b strings.Builder
	b.WriteString("<title>" + strings.Repeat("é", 1000) + "</title>")
	for i := 0; i < 100; i++ {
		b.WriteString(`<a href="/p` + strings.Repeat("x", i) + `">`)
	}
	p := Extract([]byte(b.String()), "http://h.test/", Options{MaxLinks: 10, MaxTitle: 101})
	if len(p.Links) != 10 {
		t.Errorf("%d links, want 10", len(p.Links))
	}
	if len(p.Title) != 100 {
		t.Errorf("title cut to %d bytes, want 100 (whole runes)", len(p.Title))
	}
}

func TestBadInput(t *testing.T) {
	for _, in := range []string{"", "<", "<a href", "<a href='http://[::1'>", "\x00\xff<title>", "<title>unterminated"} {
		Extract([]byte(in), "http://h.test/", Options{})
	}
	if p := Extract([]byte("<title>unterminated"), "http://h.test/", Options{}); p.Title != "unterminated" {
		t.Errorf("title %q", p.Title)
	}
}

func FuzzExtract(f *testing.F) {
	f.Add([]byte(`<base href="../x/"><a href="?q#f">`), "http://h.test/a/b")
	f.Add([]byte(`<title>t</title><link rel=canonical href=//x>`), "https://h.test")
	f.Fuzz(func(t *testing.T, body []byte, u string) {
		p := Extract(body, u, Options{MaxLinks: 50})
		for _, l := range append(p.Links, p.Nofollow...) {
			if !strings.HasPrefix(l, "http://") && !strings.HasPrefix(l, "https://") || strings.Contains(l, "#") {
				t.Fatalf("bad link %q", l)
			}
		}
	})
}

func BenchmarkExtract(b *testing.B) {
	var sb strings.Builder
	sb.WriteString("<html><head><title>Bench page</title></head><body>")
	for sb.Len() < 10000 {
		sb.WriteString(`<p>Some text of the page with <a href="/page/123.html">a link</a> and more words.</p>`)
	}
	body := []byte(sb.String())
	b.SetBytes(int64(len(body)))
	for i := 0; i < b.N; i++ {
		Extract(body, "http://h.test/x", Options{})
	}
}
