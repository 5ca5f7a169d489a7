// Package links extracts from an HTML page what a crawler needs: its title,
// its outgoing links (a, area, link, frame and iframe, resolved against
// <base href> or the page URL, fragment-free, http and https only, without
// duplicates), the rel=canonical URL, and the nofollow signals (rel=nofollow
// on a link, <meta name=robots content=nofollow> for the whole page).
//
// Why a scanner of our own: the golang.org/x/net/html tokenizer reads and
// copies every attribute of every tag, and on documentation-style pages
// (thousands of <span class=...>) it was two thirds of the fetcher's CPU.
// Extract scans only for tag starts, reads the attributes of the eight tags
// it needs and skips the rest, following the tokenizer's rules for
// comments, raw-text elements (script, style, title, textarea...), quoting
// and attribute names; entities are decoded with x/net/html. A differential
// fuzz test holds it to the tokenizer's answers.
package links

import (
	"bytes"
	"net/url"
	"strings"

	"github.com/sekitei/crawlkit/pkg/directives"
	"golang.org/x/net/html"
)

// Page is what Extract finds.
type Page struct {
	Title     string
	Links     []string // followable links, in document order
	Nofollow  []string // links marked rel=nofollow (all links when the page is nofollow)
	Canonical string   // absolute rel=canonical URL, "" if none
	// Refresh is the absolute target of the first <meta http-equiv=refresh>
	// naming another URL, RefreshDelay its delay in seconds; the target is
	// also a link.
	Refresh      string
	RefreshDelay int
	// Robots are the directives of <meta name="robots"> and of the meta
	// named after Options.Agent (package directives); NoFollowPage and
	// NoIndex say whether they hold nofollow and noindex.
	Robots                []string
	NoFollowPage, NoIndex bool
}

// Options bound the work on one page.
type Options struct {
	MaxLinks int // keep at most this many links (0: 10000)
	MaxTitle int // title length in bytes (0: 1000)
	// Agent is the robots product token whose own <meta name=...> counts
	// besides <meta name="robots">; "" for robots only.
	Agent string
}

// rawText are the elements whose content the HTML tokenizer reads as text
// up to their end tag (x/net/html's list).
var rawText = map[string]bool{"iframe": true, "noembed": true, "noframes": true, "noscript": true,
	"plaintext": true, "script": true, "style": true, "textarea": true, "title": true, "xmp": true}

type extractor struct {
	opt      Options
	base     *url.URL
	baseSet  bool
	seen     map[string]struct{}
	resolved map[string]string // pages repeat their links
	p        Page
	title    []byte
	hasTitle bool
	robots   *directives.Set
}

// Extract parses the UTF-8 HTML body of the page at pageURL.
func Extract(body []byte, pageURL string, opt Options) Page {
	if opt.MaxLinks <= 0 {
		opt.MaxLinks = 10000
	}
	if opt.MaxTitle <= 0 {
		opt.MaxTitle = 1000
	}
	base, err := url.Parse(pageURL)
	if err != nil {
		return Page{}
	}
	e := &extractor{opt: opt, base: base, seen: map[string]struct{}{}, resolved: map[string]string{},
		robots: directives.For(opt.Agent)}
	e.scan(body)
	e.p.Title = cleanTitle(e.title, opt.MaxTitle)
	e.p.Robots = e.robots.List()
	e.p.NoIndex = e.robots.Has(directives.NoIndex)
	e.p.NoFollowPage = e.robots.Has(directives.NoFollow)
	if e.p.NoFollowPage {
		e.p.Nofollow = append(e.p.Links, e.p.Nofollow...)
		e.p.Links = nil
	}
	return e.p
}

func (e *extractor) scan(b []byte) {
	var attrs [4]string // href/src/content, rel, name, http-equiv
	i := 0
	for {
		if i >= len(b) {
			return
		}
		j := bytes.IndexByte(b[i:], '<')
		if j < 0 {
			return
		}
		i += j + 1
		if i >= len(b) {
			return
		}
		c := b[i]
		switch {
		case c == '!':
			if bytes.HasPrefix(b[i:], []byte("!--")) {
				i = commentEnd(b, i+3)
			} else { // doctype, bogus comment: up to '>'
				i = skipTo(b, i, '>')
			}
			continue
		case c == '?':
			i = skipTo(b, i, '>')
			continue
		case c == '/':
			if i+1 < len(b) && isLetter(b[i+1]) {
				i = tagEnd(b, i+1, nil) // an end tag: attributes ignored
			} else if i+1 < len(b) && b[i+1] == '>' {
				i += 2
			} else {
				i = skipTo(b, i, '>') // bogus comment
			}
			continue
		case !isLetter(c):
			continue // a '<' in text
		}
		// A start tag: its name, then attributes for the tags we need.
		k := i
		for k < len(b) && !isSpace(b[k]) && b[k] != '/' && b[k] != '>' {
			k++
		}
		name := lowerName(b[i:k])
		want := wanted(name)
		attrs = [4]string{}
		if want != "" {
			i = tagEnd(b, k, func(key, val []byte) {
				switch {
				case attrs[0] == "" && string(key) == want && val != nil:
					attrs[0] = unescape(val)
				case attrs[1] == "" && string(key) == "rel":
					attrs[1] = strings.ToLower(unescape(val))
				case attrs[2] == "" && string(key) == "name":
					attrs[2] = strings.ToLower(unescape(val))
				case attrs[3] == "" && string(key) == "http-equiv":
					attrs[3] = strings.ToLower(strings.TrimSpace(unescape(val)))
				}
			})
		} else {
			i = tagEnd(b, k, nil)
		}
		if i > len(b) {
			return // unterminated tag: the tokenizer drops it
		}
		selfClosing := i >= 2 && b[i-2] == '/'
		if want != "" {
			e.tag(name, attrs[0], attrs[1], attrs[2], attrs[3], selfClosing)
		}
		if rawText[name] {
			if name == "plaintext" {
				return
			}
			end := rawEnd(b, i, name)
			if name == "title" && !e.hasTitle && !selfClosing {
				e.hasTitle = true
				t := b[i:end]
				if len(t) > 4*e.opt.MaxTitle {
					t = t[:4*e.opt.MaxTitle]
				}
				e.title = []byte(unescape(t))
			}
			i = end
		}
	}
}

// wanted returns the attribute holding the URL of a tag we need, "" if we
// do not need the tag.
func wanted(name string) string {
	switch name {
	case "a", "area", "link", "base":
		return "href"
	case "frame", "iframe":
		return "src"
	case "meta":
		return "content"
	}
	return ""
}

func (e *extractor) tag(name, ref, rel, metaName, httpEquiv string, selfClosing bool) {
	switch name {
	case "meta":
		if metaName != "" {
			e.robots.Meta(metaName, ref)
		}
		if httpEquiv == "refresh" && e.p.Refresh == "" {
			if delay, target, ok := directives.ParseRefresh(ref); ok && target != "" {
				if abs := resolve(e.base, target); abs != "" {
					e.p.Refresh, e.p.RefreshDelay = abs, delay
					e.link(abs, "")
				}
			}
		}
		return
	case "base":
		// Only the first <base href> counts.
		if !e.baseSet && ref != "" {
			if b, err := e.base.Parse(strings.TrimSpace(ref)); err == nil {
				e.base, e.baseSet = b, true
				clear(e.resolved)
			}
		}
		return
	}
	abs, done := e.resolved[ref]
	if !done {
		abs = resolve(e.base, ref)
		e.resolved[ref] = abs
	}
	if abs == "" {
		return
	}
	if name == "link" && hasWord(rel, "canonical") {
		if e.p.Canonical == "" {
			e.p.Canonical = abs
		}
		return
	}
	e.link(abs, rel)
}

func (e *extractor) link(abs, rel string) {
	if _, dup := e.seen[abs]; dup || len(e.p.Links)+len(e.p.Nofollow) >= e.opt.MaxLinks {
		return
	}
	e.seen[abs] = struct{}{}
	if hasWord(rel, "nofollow") {
		e.p.Nofollow = append(e.p.Nofollow, abs)
	} else {
		e.p.Links = append(e.p.Links, abs)
	}
}

// tagEnd reads the attributes of a tag from b[i:] (just past its name) and
// returns the offset after its '>' (len(b)+1 if there is none). attr, if not
// nil, gets each lower-cased name and its raw value (nil when the attribute
// has no value).
func tagEnd(b []byte, i int, attr func(key, val []byte)) int {
	var lower [32]byte
	for {
		for i < len(b) && (isSpace(b[i]) || b[i] == '/') {
			i++
		}
		if i >= len(b) {
			return len(b) + 1
		}
		if b[i] == '>' {
			return i + 1
		}
		// The name: up to space, '/', '>' or '=' (a leading '=' belongs to it).
		k := i + 1
		for k < len(b) && !isSpace(b[k]) && b[k] != '/' && b[k] != '>' && b[k] != '=' {
			k++
		}
		key := b[i:k]
		i = k
		for i < len(b) && isSpace(b[i]) {
			i++
		}
		var val []byte
		if i < len(b) && b[i] == '=' {
			i++
			for i < len(b) && isSpace(b[i]) {
				i++
			}
			if i >= len(b) {
				return len(b) + 1
			}
			if q := b[i]; q == '"' || q == '\'' {
				end := bytes.IndexByte(b[i+1:], q)
				if end < 0 {
					return len(b) + 1
				}
				val = b[i+1 : i+1+end]
				i += end + 2
			} else {
				k := i
				for k < len(b) && !isSpace(b[k]) && b[k] != '>' {
					k++
				}
				val = b[i:k]
				i = k
			}
			if val == nil {
				val = []byte{}
			}
		}
		if attr != nil && len(key) <= len(lower) {
			n := copy(lower[:], key)
			for j := 0; j < n; j++ {
				if c := lower[j]; c >= 'A' && c <= 'Z' {
					lower[j] = c + 'a' - 'A'
				}
			}
			attr(lower[:n], val)
		}
	}
}

// rawEnd returns where the raw text of element name, starting at i, ends:
// the '<' of its end tag, or len(b).
func rawEnd(b []byte, i int, name string) int {
	for {
		j := bytes.Index(b[i:], []byte("</"))
		if j < 0 {
			return len(b)
		}
		k := i + j + 2
		if k+len(name) <= len(b) && strings.EqualFold(string(b[k:k+len(name)]), name) &&
			(k+len(name) == len(b) || isSpace(b[k+len(name)]) || b[k+len(name)] == '/' || b[k+len(name)] == '>') {
			return i + j
		}
		i = k
	}
}

// commentEnd returns the offset after the comment whose text starts at i:
// after "-->", or "--!>", or at once for "<!-->" and "<!--->".
func commentEnd(b []byte, i int) int {
	if bytes.HasPrefix(b[i:], []byte(">")) {
		return i + 1
	}
	if bytes.HasPrefix(b[i:], []byte("->")) {
		return i + 2
	}
	for k := i; k < len(b); k++ {
		if b[k] != '>' {
			continue
		}
		if k-i >= 2 && b[k-1] == '-' && b[k-2] == '-' {
			return k + 1
		}
		if k-i >= 3 && b[k-1] == '!' && b[k-2] == '-' && b[k-3] == '-' {
			return k + 1
		}
	}
	return len(b)
}

func skipTo(b []byte, i int, c byte) int {
	j := bytes.IndexByte(b[i:], c)
	if j < 0 {
		return len(b)
	}
	return i + j + 1
}

func lowerName(b []byte) string {
	for _, c := range b {
		if c >= 'A' && c <= 'Z' {
			return strings.ToLower(string(b))
		}
	}
	return string(b)
}

func unescape(v []byte) string {
	if bytes.IndexByte(v, '&') < 0 && bytes.IndexByte(v, 0) < 0 && bytes.IndexByte(v, '\r') < 0 {
		return string(v)
	}
	s := strings.ReplaceAll(string(v), "\r\n", "\n")
	s = strings.ReplaceAll(s, "\r", "\n")
	s = strings.ReplaceAll(s, "\x00", "\uFFFD")
	return html.UnescapeString(s)
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' }

// resolve makes ref absolute against base and drops its fragment; it
// returns "" for anything that is not an http or https URL.
func resolve(base *url.URL, ref string) string {
	ref = strings.TrimSpace(ref)
	if ref == "" || ref[0] == '#' {
		return ""
	}
	// Cheap rejections before parsing.
	if i := strings.IndexByte(ref, ':'); i > 0 && i < 12 {
		s := strings.ToLower(ref[:i])
		if s != "http" && s != "https" && !strings.ContainsAny(s, "/?#") {
			return "" // mailto:, javascript:, data:, ftp: ...
		}
	}
	u, err := base.Parse(ref)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return ""
	}
	u.Fragment, u.RawFragment = "", ""
	return u.String()
}

func hasWord(list, w string) bool {
	for _, f := range strings.Fields(list) {
		if f == w {
			return true
		}
	}
	return false
}

func cleanTitle(t []byte, max int) string {
	s := strings.Join(strings.Fields(string(t)), " ")
	if len(s) > max {
		s = s[:max]
		for len(s) > 0 && s[len(s)-1]&0xC0 == 0x80 {
			s = s[:len(s)-1] // do not cut a UTF-8 sequence
		}
		if len(s) > 0 && s[len(s)-1] >= 0xC0 {
			s = s[:len(s)-1]
		}
	}
	return s
}
