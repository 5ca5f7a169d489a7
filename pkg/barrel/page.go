package barrel

import (
	"bytes"
	"net/url"
	"slices"
	"strings"

	"github.com/sekitei/crawlkit/pkg/barrel/htmldoc"
	"github.com/sekitei/crawlkit/pkg/charset"
	"github.com/sekitei/crawlkit/pkg/directives"
	"github.com/sekitei/crawlkit/pkg/urlnorm"
)

// Agent is the product token whose robots directives barrel obeys, the
// fetcher's.
const Agent = "crawlkit"

// Page is a fetched page with what the fetcher decided about it. Fields
// left empty are decided here from the page itself.
type Page struct {
	URL  string
	Body []byte // as served (Content-Encoding removed)
	// ContentType is the HTTP Content-Type ("" if unknown): its charset
	// is one input of the charset decision.
	ContentType string
	// Charset is the fetcher's charset decision (the record's "charset");
	// "" to decide from ContentType and the payload with pkg/charset.
	Charset string
	// Robots is the fetcher's directives for our agent (the record's
	// "robots"); nil to read them from the page's meta robots and
	// XRobotsTag.
	Robots []string
	// XRobotsTag holds the values of the response's X-Robots-Tag fields.
	XRobotsTag []string
	// Canonical is the fetcher's canonical URL (the record's
	// "canonical"); "" to read the page's <link rel="canonical">.
	Canonical string
}

// robots are the directives of a page that barrel acts on.
type robots struct{ noindex, nofollow, noarchive, nosnippet bool }

// flags are the directives a document entry keeps.
func (r robots) flags() uint8 {
	var f uint8
	if r.noarchive {
		f |= FlagNoArchive
	}
	if r.nosnippet {
		f |= FlagNoSnippet
	}
	return f
}

// storedMeta is put before a stored page that has nofollow, noarchive or
// nosnippet, so that every later re-parse of the repository copy (a
// re-index, a rebuild) sees them even when they came from outside the page
// (a record or a header): "" when it has none of them.
func (r robots) storedMeta() string {
	var on []string
	for _, d := range []struct {
		on   bool
		name string
	}{{r.nofollow, directives.NoFollow}, {r.noarchive, directives.NoArchive}, {r.nosnippet, directives.NoSnippet}} {
		if d.on {
			on = append(on, d.name)
		}
	}
	if len(on) == 0 {
		return ""
	}
	return `<meta name="robots" content="` + strings.Join(on, ", ") + `">` + "\n"
}

// decodePage makes the page's one charset decision and returns its text in
// UTF-8, and whether the charset had to be guessed from the bytes.
func decodePage(pg *Page) ([]byte, charset.Decision, bool) {
	ct := pg.ContentType
	if pg.Charset != "" {
		ct = "text/html; charset=" + pg.Charset
	}
	d := charset.Decide(pg.Body, ct)
	guessed := d.Source == charset.SourceSniffed && hasHighBytes(pg.Body)
	if d.Name == "utf-8" {
		return pg.Body, d, guessed // invalid sequences are read as U+FFFD by the tokenizer
	}
	return d.Decode(pg.Body), d, guessed
}

func hasHighBytes(b []byte) bool {
	for _, c := range b {
		if c >= 0x80 {
			return true
		}
	}
	return false
}

// robotsOf returns the directives that apply to the page: the fetcher's,
// or those of its metas and X-Robots-Tag.
func robotsOf(pg *Page, doc *htmldoc.Doc) robots {
	has := func(d string) bool { return slices.Contains(pg.Robots, d) }
	if pg.Robots == nil {
		s := directives.For(Agent)
		s.Header(pg.XRobotsTag)
		for _, m := range doc.Metas {
			s.Meta(m[0], m[1])
		}
		has = s.Has
	}
	return robots{noindex: has(directives.NoIndex), nofollow: has(directives.NoFollow),
		noarchive: has(directives.NoArchive), nosnippet: has(directives.NoSnippet)}
}

// canonicalOf returns the URL the page is to be indexed under when its
// canonical names another URL of the same host ("" otherwise). Another
// host's canonical is ignored: a page cannot claim a URL of a site it is
// not on.
func canonicalOf(pg *Page, doc *htmldoc.Doc, base *url.URL) string {
	c := pg.Canonical
	if c == "" {
		c = doc.Canonical
	}
	if c == "" {
		return ""
	}
	cn, err := urlnorm.Normalize(c)
	if err != nil {
		return ""
	}
	pn, err := urlnorm.Normalize(base.String())
	if err != nil || pn == cn {
		return ""
	}
	cu, err1 := url.Parse(cn)
	pu, err2 := url.Parse(pn)
	if err1 != nil || err2 != nil || cu.Host != pu.Host {
		return ""
	}
	return cn
}

// PageText returns the title and visible text of a stored page, one line
// each, as the index read them.
func PageText(pageURL string, body []byte) []byte {
	base, _ := url.Parse(pageURL)
	if base == nil {
		base = &url.URL{}
	}
	var doc htmldoc.Doc
	doc.Parse(body, base)
	out := make([]byte, 0, len(doc.Title)+len(doc.Text)+2)
	out = append(out, doc.Title...)
	out = append(out, '\n')
	out = append(out, bytes.TrimSpace(doc.Text)...)
	return append(out, '\n')
}
