package links

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// extractRef is Extract on the x/net/html tokenizer (what the scanner
// replaces for speed): the oracle of the differential fuzz test. Both feed
// the same tag and finish, so they are held to the same tokens.
func extractRef(body []byte, pageURL string, opt Options) Page {
	e, ok := newExtractor(pageURL, opt)
	if !ok {
		return Page{}
	}
	tokenize(e, body)
	return e.finish()
}

// tokenize is the scan of extractRef.
func tokenize(e *extractor, body []byte) {
	var title []byte
	inTitle, titleDone := false, false
	z := html.NewTokenizer(bytes.NewReader(body))
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			e.title = title
			return
		case html.TextToken:
			if inTitle && len(title) < 4*e.opt.MaxTitle {
				title = append(title, z.Text()...)
			}
		case html.EndTagToken:
			name, _ := z.TagName()
			if atom.Lookup(name) == atom.Title && inTitle {
				inTitle, titleDone = false, true
			}
		case html.StartTagToken, html.SelfClosingTagToken:
			name, hasAttr := z.TagName()
			a := atom.Lookup(name)
			if a == atom.Noscript {
				z.NextIsNotRawText() // scripting disabled
				continue
			}
			if a == atom.Title && !titleDone && tt == html.StartTagToken {
				inTitle = true
				continue
			}
			var key string
			switch a {
			case atom.A, atom.Area, atom.Link, atom.Base:
				key = "href"
			case atom.Frame, atom.Iframe:
				key = "src"
			case atom.Meta:
				key = "content"
			default:
				continue
			}
			var vals [4]string
			var got [4]bool
			for hasAttr {
				var k, v []byte
				k, v, hasAttr = z.TagAttr()
				n := -1
				switch string(k) {
				case key:
					n = 0
				case "rel":
					n = 1
				case "name":
					n = 2
				case "http-equiv":
					n = 3
				}
				if n >= 0 && !got[n] {
					vals[n], got[n] = string(v), true
				}
			}
			e.tag(a.String(), vals[0], got[0], vals[1], vals[2], vals[3])
		}
	}
}

// FuzzDifferential holds the scanner to the tokenizer's answers.
func FuzzDifferential(f *testing.F) {
	f.Add([]byte(`<!doctype html><title>T &amp; U</title><base href="/d/"><a href=x.html>x</a><A HREF='Y.html' REL=NOFOLLOW>`), "http://h.test/p")
	f.Add([]byte(`<!-- <a href=c1> --><script>"<a href=s>"</script><a href="ok" title="a>b">`), "http://h.test/")
	f.Add([]byte(`<meta http-equiv=Refresh content="0; url='/next'"><meta name=CrawlKit content="none"><a href=/x>`), "http://h.test/")
	f.Add([]byte(`<link rel=canonical href=/c><link rel=stylesheet href=s.css><meta name=robots content=noindex><iframe src=f></iframe>`), "https://h.test/a/")
	f.Add([]byte(`<a href="&#104;ttp://e.test/&lt;x&gt;">`+"<style>a{}</STYLE><a\thref=t>"+`<!--->`+`<a href=after>`), "http://h.test/")
	f.Add([]byte(`<title/>x<a href=in-title></title><a href=z><textarea><a href=no></textarea><noscript><a href=ns></noscript>`), "http://h.test/")
	f.Add([]byte(`</a href=end><? pi ><a =x href=y><a href = "sp" ><area href=ar /><frame src=fr>`), "http://h.test/")
	f.Add([]byte(`<a href="?a=1&not=2&copy;&amp=x&notin&#x26;&region=1" rel="&#110;ofollow"><a href='&quot&sect9&#0;'>`+"<a href=\"x\r\n\x00\">"), "http://h.test/")
	f.Fuzz(func(t *testing.T, body []byte, u string) {
		got := Extract(body, u, Options{MaxLinks: 100, Agent: "crawlkit"})
		want := extractRef(body, u, Options{MaxLinks: 100, Agent: "crawlkit"})
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("scanner and tokenizer differ on %q\n got %+v\nwant %+v", body, got, want)
		}
	})
}

// The scanner agrees with the tokenizer on a real page.
func TestDifferentialPage(t *testing.T) {
	var b strings.Builder
	b.WriteString(`<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Built-in Functions &#8212; Python 3.11 docs</title>`)
	b.WriteString(`<link rel="stylesheet" href="../_static/pydoctheme.css" type="text/css" /><link rel="canonical" href="https://docs.python.org/3/library/functions.html" />`)
	b.WriteString(`<script>var x = "<a href='no.html'>"; if (a < b) {}</script></head><body>`)
	for i := 0; i < 200; i++ {
		b.WriteString(`<dl class="py function"><dt class="sig sig-object py" id="abs"><span class="sig-name descname"><span class="pre">abs</span></span>`)
		b.WriteString(`<a class="headerlink" href="#abs" title="Permalink">¶</a></dt><dd><p>See <a class="reference internal" href="stdtypes.html#int" title="int"><code class="xref py py-class docutils literal notranslate"><span class="pre">int</span></code></a>`)
		b.WriteString(`<a href="../reference/x` + strings.Repeat("y", i%7) + `.html#z">ref</a></p></dd></dl><!-- c <a href=com> -->`)
	}
	b.WriteString(`</body></html>`)
	body := []byte(b.String())
	got := Extract(body, "http://docs.test/library/functions.html", Options{})
	want := extractRef(body, "http://docs.test/library/functions.html", Options{})
	if !reflect.DeepEqual(got, want) || len(got.Links) < 8 || got.Canonical == "" {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
}

func BenchmarkExtractRef(b *testing.B) {
	var sb strings.Builder
	sb.WriteString("<html><head><title>Bench page</title></head><body>")
	for sb.Len() < 10000 {
		sb.WriteString(`<p>Some text of the page with <a href="/page/123.html">a link</a> and more words.</p>`)
	}
	body := []byte(sb.String())
	b.SetBytes(int64(len(body)))
	for i := 0; i < b.N; i++ {
		extractRef(body, "http://h.test/x", Options{})
	}
}

var _ = bytes.NewReader
var _ = html.NewTokenizer
var _ = atom.A
