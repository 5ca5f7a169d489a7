// Package sitemap reads sitemaps by the Sitemaps XML protocol
// (sitemaps.org, 0.9): <urlset> files with <loc>, <lastmod>, <changefreq>
// and <priority>, <sitemapindex> files listing other sitemaps, gzipped
// files, and plain-text files of one URL a line; and discovers them from
// the Sitemap: lines of robots.txt.
//
// Everything is bounded as the protocol bounds it: 50,000 URLs and 50 MB
// (uncompressed) per file, an index may list sitemaps but not further
// indexes (nested depth 1), and a sitemap may list only URLs of its own
// host, under its own directory unless robots.txt named it. Files are read
// as a stream (encoding/xml's tokenizer, klauspost/compress for gzip), so
// a gzip bomb or a file of ten million URLs costs a fixed amount of memory
// and stops at the limit with an error saying so.
package sitemap

import (
	"bufio"
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
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
)

// An Entry is one <url> of a urlset, one <sitemap> of an index, or one line
// of a text sitemap.
type Entry struct {
	Loc        string  // absolute URL as written
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

// Parse reads one sitemap file (gzipped or not) from r and calls fn with
// the file's kind and each entry, in file order, at most lim.URLs times. It returns the kind of
// file; an error after some entries (ErrTooMany, ErrTooLarge, a syntax
// error) leaves those entries delivered.
func Parse(r io.Reader, lim Limits, fn func(kind string, e Entry) error) (string, error) {
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
		return KindText, parseText(src, lim, fn)
	}
	return parseXML(src, lim, fn)
}

func parseText(r *bufio.Reader, lim Limits, fn func(string, Entry) error) error {
	n := 0
	for {
		line, err := r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			for errors.Is(err, bufio.ErrBufferFull) { // a line over 32 KiB is no URL
				_, err = r.ReadSlice('\n')
			}
			continue
		}
		s := strings.TrimSpace(strings.TrimPrefix(string(line), "\xEF\xBB\xBF"))
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

func parseXML(r io.Reader, lim Limits, fn func(string, Entry) error) (string, error) {
	d := xml.NewDecoder(r)
	d.Strict = false
	d.CharsetReader = func(label string, in io.Reader) (io.Reader, error) {
		return in, nil // the protocol requires UTF-8; a declaration otherwise is ignored
	}
	kind := ""
	var cur *Entry
	field := ""
	var text strings.Builder
	n := 0
	for {
		tok, err := d.Token()
		if err == io.EOF {
			if kind == "" {
				return "", fmt.Errorf("%w: no <urlset> or <sitemapindex>", ErrFormat)
			}
			return kind, nil
		}
		if err != nil {
			if errors.Is(err, ErrTooLarge) {
				return kind, ErrTooLarge
			}
			if kind == "" {
				return "", fmt.Errorf("%w: %v", ErrFormat, err)
			}
			return kind, fmt.Errorf("XML: %v", err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			name := strings.ToLower(t.Name.Local)
			switch {
			case kind == "" && (name == KindURLSet || name == KindIndex):
				kind = name
			case kind == "":
				return "", fmt.Errorf("%w: root element <%s>", ErrFormat, t.Name.Local)
			case name == "url" && kind == KindURLSet || name == "sitemap" && kind == KindIndex:
				cur = &Entry{Priority: -1}
			case cur != nil && (name == "loc" || name == "lastmod" || name == "changefreq" || name == "priority"):
				field = name
				text.Reset()
			}
		case xml.CharData:
			if field != "" && text.Len() < 8192 {
				text.Write(t)
			}
		case xml.EndElement:
			name := strings.ToLower(t.Name.Local)
			if cur == nil {
				continue
			}
			if name == field {
				setField(cur, field, strings.TrimSpace(text.String()))
				field = ""
				continue
			}
			if name == "url" || name == "sitemap" {
				e := *cur
				cur = nil
				if e.Loc == "" {
					continue
				}
				if n >= lim.urls() {
					return kind, ErrTooMany
				}
				n++
				if err := fn(kind, e); err != nil {
					return kind, err
				}
			}
		}
	}
}

var changeFreqs = map[string]bool{"always": true, "hourly": true, "daily": true, "weekly": true,
	"monthly": true, "yearly": true, "never": true}

func setField(e *Entry, field, v string) {
	switch field {
	case "loc":
		e.Loc = v
	case "lastmod":
		if t, ok := ParseLastMod(v); ok {
			e.LastMod = record.FormatTime(t)
		}
	case "changefreq":
		if v = strings.ToLower(v); changeFreqs[v] {
			e.ChangeFreq = v
		}
	case "priority":
		if p, err := strconv.ParseFloat(v, 64); err == nil && p >= 0 && p <= 1 {
			e.Priority = p
		}
	}
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

// Allowed reports whether a sitemap at sitemapURL may list loc: the same
// scheme and host (normalised), and, unless robots.txt named the sitemap,
// a path under the sitemap's directory.
func Allowed(sitemapURL, loc string, fromRobots bool) bool {
	sm, err1 := urlnorm.Normalize(sitemapURL)
	l, err2 := urlnorm.Normalize(loc)
	if err1 != nil || err2 != nil {
		return false
	}
	su, err1 := url.Parse(sm)
	lu, err2 := url.Parse(l)
	if err1 != nil || err2 != nil || su.Scheme != lu.Scheme || su.Host != lu.Host {
		return false
	}
	if fromRobots {
		return true
	}
	dir := su.EscapedPath()
	dir = dir[:strings.LastIndexByte(dir, '/')+1]
	return strings.HasPrefix(lu.EscapedPath(), dir)
}
