// Package sitemap reads sitemaps by the Sitemaps XML protocol
// (sitemaps.org, 0.9): <urlset> files with <loc>, <lastmod>, <changefreq>
// and <priority>, <sitemapindex> files listing other sitemaps, gzipped
// files, and plain-text files of one URL a line; news feeds, which Google
// and Bing take as sitemaps: RSS 2.0 (an item's <link>, <pubDate> by RFC 822
// as lastmod), RSS 1.0 (an item's <link> or rdf:about, <dc:date>) and Atom
// 1.0, RFC 4287 (an entry's <link> with rel "alternate" or none, <updated>);
// and discovers them from the Sitemap: lines of robots.txt.
//
// Only the elements of the format itself count, direct children of an
// entry in its namespace (or none): extension elements (image:loc,
// video:content_loc, news:publication_date, xhtml:link...) are skipped, so
// an image's URL never stands for its page. Entries with no URL and values
// that cannot be read are reported and the rest is read.
//
// Everything is bounded as the protocol bounds it: 50,000 URLs and 50 MB
// (uncompressed) per file, an index may list sitemaps but not further
// indexes (nested depth 1), and a sitemap may list only URLs of its own
// host under its own directory, or any URL of the site whose robots.txt
// named it (cross-submission, see Allowed). Files are read as a stream
// (encoding/xml's tokenizer, klauspost/compress for gzip), so a gzip bomb or
// a file of ten million URLs costs a fixed amount of memory and stops at the
// limit with an error saying so.
package sitemap

import (
	"bufio"
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/mail"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/sekitei/crawlkit/pkg/record"

	"github.com/klauspost/compress/gzip"

	"github.com/sekitei/crawlkit/pkg/urlnorm"
)

// The protocol's limits.
const (
	MaxURLs  = 50000
	MaxBytes = 50 << 20
)

// Kinds of sitemap file.
const (
	KindURLSet = "urlset"
	KindIndex  = "sitemapindex"
	KindText   = "text"
	KindRSS    = "rss"  // RSS 2.0 (and 0.9x)
	KindRDF    = "rdf"  // RSS 1.0
	KindAtom   = "atom" // Atom 1.0
)

// IsFeed reports whether kind is a news feed read as a sitemap.
func IsFeed(kind string) bool { return kind == KindRSS || kind == KindRDF || kind == KindAtom }

// An Entry is one <url> of a urlset, one <sitemap> of an index, one line of
// a text sitemap, or one item or entry of a feed.
type Entry struct {
	Loc        string  // the URL as written (a feed's may be relative)
	LastMod    string  // RFC 3339 (UTC), "" if absent or unreadable
	ChangeFreq string  // always, hourly, daily, weekly, monthly, yearly, never; "" if absent or invalid
	Priority   float64 // 0.0-1.0; -1 if absent or invalid
}

// Errors of Parse; they wrap the details.
var (
	ErrTooMany  = errors.New("more than 50,000 entries: the rest ignored")
	ErrTooLarge = errors.New("more than 50 MB uncompressed: the rest ignored")
	ErrFormat   = errors.New("not a sitemap")
)

// Limits override the protocol's (tests use small ones).
type Limits struct {
	URLs  int   // MaxURLs when 0
	Bytes int64 // MaxBytes when 0
}

func (l Limits) urls() int {
	if l.URLs <= 0 {
		return MaxURLs
	}
	return l.URLs
}

func (l Limits) bytes() int64 {
	if l.Bytes <= 0 {
		return MaxBytes
	}
	return l.Bytes
}

// capReader fails once more than n bytes were read.
type capReader struct {
	r io.Reader
	n int64
}

func (c *capReader) Read(p []byte) (int, error) {
	if c.n < 0 {
		return 0, ErrTooLarge
	}
	if int64(len(p)) > c.n+1 {
		p = p[:c.n+1]
	}
	k, err := c.r.Read(p)
	c.n -= int64(k)
	if c.n < 0 {
		return k, ErrTooLarge
	}
	return k, err
}

// Parse reads one sitemap or feed file (gzipped or not) from r and calls fn
// with the file's kind and each entry, in file order, at most lim.URLs
// times. It returns the kind of file; an error after some entries
// (ErrTooMany, ErrTooLarge, a syntax error) leaves those entries delivered.
// A malformed entry (no URL, a date or other value it cannot read) goes to
// warn (which may be nil) as "item 3: what is wrong" and the rest is read;
// an entry with a bad value is kept without it.
func Parse(r io.Reader, lim Limits, fn func(kind string, e Entry) error, warn func(string)) (string, error) {
	br := bufio.NewReaderSize(r, 32<<10)
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return "", fmt.Errorf("%w: bad gzip: %v", ErrFormat, err)
		}
		defer zr.Close()
		br = bufio.NewReaderSize(zr, 32<<10)
	}
	cr := &capReader{r: br, n: lim.bytes()}
	src := bufio.NewReaderSize(cr, 32<<10)
	head, _ := src.Peek(512)
	head = bytes.TrimLeft(bytes.TrimPrefix(head, []byte("\xEF\xBB\xBF")), " \t\r\n")
	if len(head) == 0 {
		return "", fmt.Errorf("%w: empty", ErrFormat)
	}
	if head[0] != '<' {
		return KindText, parseText(src, lim, fn, warn)
	}
	return parseXML(src, lim, fn, warn)
}

func parseText(r *bufio.Reader, lim Limits, fn func(string, Entry) error, warn func(string)) error {
	n := 0
	for line := 1; ; line++ {
		b, err := r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			for errors.Is(err, bufio.ErrBufferFull) { // a line over 32 KiB is no URL
				_, err = r.ReadSlice('\n')
			}
			if warn != nil {
				warn(fmt.Sprintf("line %d: over 32 KiB: skipped", line))
			}
			continue
		}
		s := strings.TrimSpace(strings.TrimPrefix(string(b), "\xEF\xBB\xBF"))
		if s != "" && !strings.HasPrefix(s, "http://") && !strings.HasPrefix(s, "https://") && warn != nil {
			warn(fmt.Sprintf("line %d: %q is not an http(s) URL: skipped", line, clip(s)))
		}
		if s != "" && (strings.HasPrefix(s, "http://") || strings.HasPrefix(s, "https://")) {
			if n >= lim.urls() {
				return ErrTooMany
			}
			n++
			if ferr := fn(KindText, Entry{Loc: s, Priority: -1}); ferr != nil {
				return ferr
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// Namespaces the XML reader tells apart.
const (
	nsSitemap = "http://www.sitemaps.org/schemas/sitemap/0.9"
	nsRSS1    = "http://purl.org/rss/1.0/"
	nsDC      = "http://purl.org/dc/elements/1.1/"
	nsAtom    = "http://www.w3.org/2005/Atom"
	nsRDF     = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
)

// xmlReader holds the state of one XML file: its kind, the entry being
// read and the field of it whose text is being gathered.
type xmlReader struct {
	kind   string
	rootNS string
	depth  int // of the element just opened
	cur    *Entry
	curAt  int // depth of cur's element
	nth    int // entries seen, for the reports
	field  string
	text   strings.Builder
	warn   func(string)
	linked bool // cur already has its Atom link
}

// entryName is the element of one entry in each kind of file.
var entryName = map[string]string{KindURLSet: "url", KindIndex: "sitemap", KindRSS: "item", KindRDF: "item", KindAtom: "entry"}

// rootKind maps a root element to the kind of file.
var rootKind = map[string]string{"urlset": KindURLSet, "sitemapindex": KindIndex, "rss": KindRSS, "rdf": KindRDF, "feed": KindAtom}

func parseXML(r io.Reader, lim Limits, fn func(string, Entry) error, warn func(string)) (string, error) {
	d := xml.NewDecoder(r)
	d.Strict = false
	d.CharsetReader = func(label string, in io.Reader) (io.Reader, error) {
		return in, nil // the protocol requires UTF-8; a declaration otherwise is ignored
	}
	x := &xmlReader{warn: warn}
	n := 0
	for {
		tok, err := d.Token()
		if err == io.EOF {
			if x.kind == "" {
				return "", fmt.Errorf("%w: no <urlset>, <sitemapindex>, <rss>, <rdf:RDF> or <feed>", ErrFormat)
			}
			return x.kind, nil
		}
		if err != nil {
			if errors.Is(err, ErrTooLarge) {
				return x.kind, ErrTooLarge
			}
			if x.kind == "" {
				return "", fmt.Errorf("%w: %v", ErrFormat, err)
			}
			return x.kind, fmt.Errorf("XML: %v", err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			x.depth++
			if x.depth == 1 {
				k, ok := rootKind[strings.ToLower(t.Name.Local)]
				if !ok {
					return "", fmt.Errorf("%w: root element <%s>", ErrFormat, t.Name.Local)
				}
				x.kind, x.rootNS = k, t.Name.Space
				continue
			}
			x.start(t)
		case xml.CharData:
			if x.field != "" && x.text.Len() < 8192 {
				x.text.Write(t)
			}
		case xml.EndElement:
			e, done := x.end()
			x.depth--
			if !done {
				continue
			}
			if n >= lim.urls() {
				return x.kind, ErrTooMany
			}
			n++
			if err := fn(x.kind, e); err != nil {
				return x.kind, err
			}
		}
	}
}

// ours reports whether an element of namespace ns belongs to the format of
// the file rather than to an extension (image:, video:, news:, xhtml:...):
// no namespace, or the root's. An undeclared prefix is its own namespace.
func (x *xmlReader) ours(ns string) bool {
	return ns == "" || ns == x.rootNS ||
		ns == nsSitemap && (x.kind == KindURLSet || x.kind == KindIndex) ||
		ns == nsRSS1 && x.kind == KindRDF || ns == nsAtom && x.kind == KindAtom
}

func (x *xmlReader) start(t xml.StartElement) {
	name := strings.ToLower(t.Name.Local)
	if x.cur == nil {
		if name == entryName[x.kind] && x.ours(t.Name.Space) {
			x.cur, x.curAt, x.linked = &Entry{Priority: -1}, x.depth, false
			x.nth++
			if x.kind == KindRDF {
				// rdf:about names the item; <link> is preferred when given.
				for _, a := range t.Attr {
					if a.Name.Local == "about" && (a.Name.Space == nsRDF || a.Name.Space == "rdf") {
						x.cur.Loc = strings.TrimSpace(a.Value)
					}
				}
			}
		}
		return
	}
	if x.depth != x.curAt+1 {
		return // inside an extension element or an Atom <source>
	}
	field := ""
	switch {
	case t.Name.Space == nsDC || t.Name.Space == "dc":
		if name == "date" && (x.kind == KindRSS || x.kind == KindRDF) {
			field = "dc:date"
		}
	case !x.ours(t.Name.Space):
	case x.kind == KindURLSet || x.kind == KindIndex:
		if name == "loc" || name == "lastmod" || name == "changefreq" || name == "priority" {
			field = name
		}
	case x.kind == KindRSS || x.kind == KindRDF:
		if name == "link" || name == "pubdate" && x.kind == KindRSS {
			field = name
		}
	case x.kind == KindAtom:
		if name == "updated" {
			field = name
		}
		if name == "link" && !x.linked {
			rel, href := "", ""
			for _, a := range t.Attr {
				switch strings.ToLower(a.Name.Local) {
				case "rel":
					rel = strings.TrimSpace(a.Value)
				case "href":
					href = strings.TrimSpace(a.Value)
				}
			}
			// RFC 4287 4.2.7.2: no rel means alternate, the entry's page.
			if (rel == "" || rel == "alternate") && href != "" {
				x.cur.Loc, x.linked = href, true
			}
		}
	}
	if field != "" {
		x.field = field
		x.text.Reset()
	}
}

// end closes the element at x.depth; it returns the entry it completes.
func (x *xmlReader) end() (Entry, bool) {
	if x.cur == nil {
		return Entry{}, false
	}
	if x.field != "" && x.depth == x.curAt+1 {
		x.set(x.field, strings.TrimSpace(x.text.String()))
		x.field = ""
		return Entry{}, false
	}
	if x.depth != x.curAt {
		return Entry{}, false
	}
	e := *x.cur
	x.cur = nil
	if e.Loc == "" {
		what := "<loc>"
		if x.kind == KindRSS || x.kind == KindRDF {
			what = "<link>"
		} else if x.kind == KindAtom {
			what = `<link rel="alternate">`
		}
		x.report("%s %d: no %s: skipped", entryName[x.kind], x.nth, what)
		return Entry{}, false
	}
	return e, true
}

func (x *xmlReader) report(format string, args ...any) {
	if x.warn != nil {
		x.warn(fmt.Sprintf(format, args...))
	}
}

var changeFreqs = map[string]bool{"always": true, "hourly": true, "daily": true, "weekly": true,
	"monthly": true, "yearly": true, "never": true}

// set stores a field's value; a value it cannot read is reported and left
// out, the entry kept.
func (x *xmlReader) set(field, v string) {
	e := x.cur
	bad := func(what string) {
		name := field
		if name == "pubdate" {
			name = "pubDate"
		}
		x.report("%s %d: %s %q is not %s: ignored", entryName[x.kind], x.nth, name, clip(v), what)
	}
	switch field {
	case "loc", "link":
		e.Loc = v
	case "lastmod", "updated", "dc:date":
		if t, ok := ParseLastMod(v); ok {
			e.LastMod = record.FormatTime(t)
		} else if v != "" {
			bad("a W3C date-time")
		}
	case "pubdate":
		if t, ok := ParsePubDate(v); ok {
			e.LastMod = record.FormatTime(t)
		} else if v != "" {
			bad("an RFC 822 date")
		}
	case "changefreq":
		if l := strings.ToLower(v); changeFreqs[l] {
			e.ChangeFreq = l
		} else if v != "" {
			bad("always, hourly, daily, weekly, monthly, yearly or never")
		}
	case "priority":
		if p, err := strconv.ParseFloat(v, 64); err == nil && p >= 0 && p <= 1 {
			e.Priority = p
		} else if v != "" {
			bad("a number from 0.0 to 1.0")
		}
	}
}

func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}

// rfc822Zones are the zone names of RFC 822 other than UT and GMT, which
// time.Parse would read as unknown names at offset zero.
var rfc822Zones = map[string]string{"EST": "-0500", "EDT": "-0400", "CST": "-0600", "CDT": "-0500",
	"MST": "-0700", "MDT": "-0600", "PST": "-0800", "PDT": "-0700", "Z": "+0000", "UTC": "+0000"}

// ParsePubDate reads an RSS 2.0 <pubDate>: an RFC 822 date-time as RFC 1123
// amended it (four-digit years), read by net/mail; a W3C date-time, which
// some feeds put there, is taken too.
func ParsePubDate(v string) (time.Time, bool) {
	if i := strings.LastIndexByte(v, ' '); i >= 0 {
		if z, ok := rfc822Zones[strings.ToUpper(v[i+1:])]; ok {
			v = v[:i+1] + z
		}
	}
	if t, err := mail.ParseDate(v); err == nil {
		return t, true
	}
	return ParseLastMod(v)
}

// lastModLayouts are the W3C Datetime forms the protocol allows, and the
// common offenders (a space for "T", no time zone).
var lastModLayouts = []string{time.RFC3339Nano, "2006-01-02T15:04Z07:00", "2006-01-02", "2006-01",
	"2006", "2006-01-02T15:04:05", "2006-01-02 15:04:05", "2006-01-02T15:04:05Z0700"}

// ParseLastMod reads a <lastmod> value (W3C Datetime).
func ParseLastMod(v string) (time.Time, bool) {
	for _, l := range lastModLayouts {
		if t, err := time.Parse(l, v); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// Allowed reports whether a sitemap at sitemapURL may list loc, by the
// protocol's rules: a URL of the sitemap's own scheme and host under the
// sitemap's directory; or, when robotsURL is the robots.txt that named the
// sitemap ("" if none did), any URL of that robots.txt's scheme and host,
// wherever the sitemap lies (the protocol's cross-submission: the site's
// robots.txt vouches for a sitemap on another host).
func Allowed(sitemapURL, loc, robotsURL string) bool {
	su, ok1 := parseNorm(sitemapURL)
	lu, ok2 := parseNorm(loc)
	if !ok1 || !ok2 {
		return false
	}
	if robotsURL != "" {
		if ru, ok := parseNorm(robotsURL); ok && ru.Scheme == lu.Scheme && ru.Host == lu.Host {
			return true
		}
	}
	if su.Scheme != lu.Scheme || su.Host != lu.Host {
		return false
	}
	dir := su.EscapedPath()
	dir = dir[:strings.LastIndexByte(dir, '/')+1]
	return strings.HasPrefix(lu.EscapedPath(), dir)
}

// parseNorm parses the normal form of an absolute http(s) URL.
func parseNorm(raw string) (*url.URL, bool) {
	n, err := urlnorm.Normalize(raw)
	if err != nil {
		return nil, false
	}
	u, err := url.Parse(n)
	if err != nil || u.Host == "" {
		return nil, false
	}
	return u, true
}
