package links

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sekitei/crawlkit/pkg/textsig"
)

var sigPages = []string{
	"", "plain words only", "<p>a &amp; b &lt;c&gt; d&nbsp;e</p>", "x < y and <b>bold</b>z",
	`<html><head><title>T &amp; U</title><style>p{}</style></head><body><nav><a href=/>Home</a></nav>` +
		`<article><h1>Heading</h1><p>Main text, with <a href=x>a link</a> inside.</p></article><footer>(c)</footer></body></html>`,
	"<title>no head title</title><p>text</p><noscript><p>ns <a href=n>x</a></p></noscript><div>after noscript</div>",
	"<p>one<!-- comment -->two<?pi?>three</p><![CDATA[x]]>four</p ><br/>five<BR>SIX</P>",
	"<ul><li><a href=1>one</a></li><li><a href=2>two</a></li></ul><p>Long paragraph of real text\r\nwith CRLF</p>",
	"<textarea>t &amp; a</textarea><script>if (a < b) {}</script><xmp><p>x</xmp><p>tail",
	"<p>unterminated <a href=x", "<p>trailing <", "<plaintext><p>all text",
}

func TestSignatureInOnePass(t *testing.T) {
	check := func(name string, body []byte) {
		t.Helper()
		p := Extract(body, "http://h.test/p", Options{Signature: true})
		if want := textsig.Signature(body); p.TextSig != want {
			t.Errorf("%s: TextSig %016x, textsig.Signature %016x", name, p.TextSig, want)
		}
	}
	for _, p := range sigPages {
		check(strings.ReplaceAll(p, "\n", " "), []byte(p))
	}
	// Past textsig.MaxPage the text is not signed.
	long := strings.Repeat("<p>filler words here</p>", textsig.MaxPage/24+10) + "<p>beyond</p>"
	check("long page", []byte(long))
	n := 0
	filepath.WalkDir("/usr/share/doc/python3.11/html", func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && filepath.Ext(p) == ".html" {
			if body, err := os.ReadFile(p); err == nil {
				n++
				check(p, body)
			}
		}
		return nil
	})
	t.Logf("%d Python documentation pages", n)
}

func FuzzSignatureInOnePass(f *testing.F) {
	for _, p := range sigPages {
		f.Add([]byte(p))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		p := Extract(body, "http://h.test/p", Options{Signature: true})
		if want := textsig.Signature(body); p.TextSig != want {
			t.Fatalf("%q: TextSig %016x, textsig.Signature %016x", body, p.TextSig, want)
		}
	})
}

// A page of a million link tags keeps MaxLinks links and counts the rest.
func TestLinkCap(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 100000; i++ {
		b.WriteString(`<a href="/p`)
		b.WriteString(strings.Repeat("x", i%3))
		b.WriteString(string(rune('a' + i%26)))
		b.WriteString(`">l</a><a href="/same">s</a>`)
		if i%1000 == 0 {
			b.WriteString(`<a href="/u` + strings.Repeat("y", i/1000) + `">`)
		}
	}
	p := Extract([]byte(b.String()), "http://h.test/", Options{MaxLinks: 50})
	if len(p.Links) != 50 {
		t.Fatalf("%d links, want 50", len(p.Links))
	}
	if p.Cut == 0 {
		t.Fatal("no link counted as cut")
	}
	// Without the cap reached, nothing is cut.
	q := Extract([]byte(b.String()), "http://h.test/", Options{MaxLinks: 1000})
	if q.Cut != 0 || len(q.Links) != 26*3+1+100 {
		t.Fatalf("%d links, %d cut; want %d and 0", len(q.Links), q.Cut, 26*3+1+100)
	}
}
