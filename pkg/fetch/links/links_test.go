package links

import (
	"reflect"
	"strings"
	"testing"
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
