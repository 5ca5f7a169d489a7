package fetch

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/sekitei/crawlkit/pkg/textsig"
)

// A page's record carries the signature textsig.Signature gives its body,
// at most MaxLinks links, and the count of those left out.
func TestOnePassRecord(t *testing.T) {
	var b strings.Builder
	b.WriteString("<html><head><title>Many links</title></head><body><nav><a href=/>Home</a></nav><article><p>")
	b.WriteString("The main text of a page with &amp; entities and a <a href=/in>link</a> in it.</p>")
	for i := 0; i < 30; i++ {
		fmt.Fprintf(&b, `<li><a href="/p%d">page %d</a></li><a href="/p%d">again</a>`, i, i, i)
	}
	b.WriteString("</article></body></html>")
	page := b.String()
	h := newHost(t, "127.0.0.1", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte(page))
	}))
	cfg := testConfig()
	cfg.MaxLinks = 10
	out := runFetch(t, cfg, h.url("/page"))
	r := out[h.url("/page")].rec
	if got, want := str(r, "text_simhash"), textsig.Hex(textsig.Signature([]byte(page))); got != want {
		t.Errorf("text_simhash %s, want %s", got, want)
	}
	links := strs(t, out, h.url("/page"), "links")
	if len(links) != 10 || !strings.HasSuffix(links[0], "/") || !strings.HasSuffix(links[1], "/in") {
		t.Errorf("links %q", links)
	}
	// The scan keeps 2x10 distinct references (/, /in, /p0 to /p17), 10 of
	// them become links and 10 are cut; /p18 to /p29 come after the scan's
	// cap, twice each: 24 more.
	if n := num(r, "links_cut"); n != 34 {
		t.Errorf("links_cut %d, want 34: %s", n, r.AppendJSON(nil))
	}
}
