// Package links extracts from an HTML page what a crawler needs: its title,
// its outgoing links (a, area, link, frame, iframe and meta refresh), the
// rel=canonical URL, and the nofollow signals (rel=nofollow on a link,
// <meta name=robots content=nofollow> for the whole page).
//
// Links are what a browser would request: attribute values as the HTML
// tokenizer returns them (a legacy reference without ";" before "=" or an
// alphanumeric stays: "?a=1&not=2" is not "?a=1¬=2"), resolved against
// the document base URL (the first <base href>, which applies to the links
// before it too) by the URL Standard (package weburl) with the query in
// the page's encoding, in request form (no fragment), http and https only,
// without duplicates, in document order. A crawler runs no scripts, so
// noscript content is parsed as markup, as with scripting disabled.
//
// Why a scanner of our own: the golang.org/x/net/html tokenizer reads and
// copies every attribute of every tag, and on documentation-style pages
// (thousands of <span class=...>) it was two thirds of the fetcher's CPU.
// Over the 530 pages of the Python documentation the scan takes 0.40 ms a
// page and the tokenizer, reading attributes only of the tags needed,
// 2.1 ms (5x; `go test -run X -bench 'Docs.*Scan$' -benchtime 5300x`,
// link resolution left out as both share it), so the scanner stays. It
// scans only for tag starts, reads the attributes of the tags it needs and
// skips the rest, following the tokenizer's rules for comments, raw-text
// elements (script, style, title, textarea...), quoting and attribute
// names; a value holding a character reference, NUL or CR goes through the
// x/net/html tokenizer itself, for its attribute rule. A differential fuzz
// test (FuzzDifferential) holds the scanner to the tokenizer's answers.
package links

import (
	"bytes"
	"errors"
	"strings"
	"sync"

	"github.com/sekitei/crawlkit/pkg/directives"
	"github.com/sekitei/crawlkit/pkg/textsig"
	"github.com/sekitei/crawlkit/pkg/weburl"
	"golang.org/x/net/html"
	"golang.org/x/text/encoding"
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
	// Cut counts the links left out by Options.MaxLinks: resolved links
	// past MaxLinks, and link references past the scan's cap (each time
	// one appears: the scan no longer remembers them).
	Cut int
	// LinkURLs and NofollowURLs are Links and Nofollow parsed (the same
	// order), so that a caller needs not parse them again.
	LinkURLs, NofollowURLs []*weburl.URL
	// TextSig is the page's main-text signature (package textsig), when
	// Options.Signature asks for it; it equals textsig.Signature(body).
	TextSig uint64
}

// Options bound the work on one page.
type Options struct {
	// MaxLinks: keep at most this many links (0: 10000). The scan keeps at
	// most 2*MaxLinks distinct link references for resolution (a reference
	// may resolve to nothing or to a link already kept), so that a page of
	// a million links costs memory in proportion to MaxLinks, not to the
	// page; Page.Cut counts what is left out.
	MaxLinks int
	MaxTitle int // title length in bytes (0: 1000)
	// Agent is the robots product token whose own <meta name=...> counts
	// besides <meta name="robots">; "" for robots only.
	Agent string
	// Encoding is the page's charset (nil for UTF-8): the URL Standard
	// encodes the query of a link in it.
	Encoding encoding.Encoding
	// Signature: sign the page's main text (Page.TextSig) in the same pass.
	Signature bool
}

// rawText are the elements whose content the HTML tokenizer reads as text
// up to their end tag (x/net/html's list, without noscript: a crawler runs
// no scripts, so it parses noscript content as markup, as the Standard
// does with scripting disabled).
func rawText(name string) bool {
	switch name {
	case "iframe", "noembed", "noframes", "plaintext", "script", "style", "textarea", "title", "xmp":
		return true
	}
	return false
}

// A found is a URL-bearing tag in document order, resolved after the scan
// because the first <base href> applies to links before it too.
type found struct {
	kind  byte // 'a' link, 'c' canonical, 'r' refresh
	ref   string
	rel   string
	delay int
}

type extractor struct {
	opt      Options
	page     *weburl.URL
	baseRef  string
	baseSet  bool
	found    []found
	seen     map[string]struct{}
	p        Page
	title    []byte
	hasTitle bool
	robots   *directives.Set
	lower    [32]byte            // tagEnd's buffer for attribute names
	refs     map[string]struct{} // distinct link references kept by the scan
	// sig signs the main text (nil: not asked); it sees the text and tags
	// of the first sigLimit bytes, except the content of noscript up to
	// mute (raw text for the tokenizer Signature reads with).
	sig      *textsig.Signer
	sigLimit int
	mute     int
}

var signers = sync.Pool{New: func() any { return new(textsig.Signer) }}

// Extract parses the UTF-8 HTML body of the page at pageURL.
func Extract(body []byte, pageURL string, opt Options) Page {
	e, ok := newExtractor(pageURL, opt)
	if !ok {
		return Page{}
	}
	if opt.Signature {
		e.sig = signers.Get().(*textsig.Signer)
		e.sig.Reset()
		e.sigLimit = min(len(body), textsig.MaxPage)
	}
	e.scan(body)
	if e.sig != nil {
		e.p.TextSig = e.sig.Sum()
		signers.Put(e.sig)
		e.sig = nil
	}
	return e.finish()
}

func newExtractor(pageURL string, opt Options) (*extractor, bool) {
	if opt.MaxLinks <= 0 {
		opt.MaxLinks = 10000
	}
	if opt.MaxTitle <= 0 {
		opt.MaxTitle = 1000
	}
	page, err := weburl.Parse(pageURL)
	if err != nil {
		return nil, false
	}
	return &extractor{opt: opt, page: page, refs: make(map[string]struct{}, 64), robots: directives.For(opt.Agent)}, true
}

func (e *extractor) finish() Page {
	e.resolveAll()
	e.p.Title = cleanTitle(e.title, e.opt.MaxTitle)
	e.p.Robots = e.robots.List()
	e.p.NoIndex = e.robots.Has(directives.NoIndex)
	e.p.NoFollowPage = e.robots.Has(directives.NoFollow)
	if e.p.NoFollowPage {
		e.p.Nofollow = append(e.p.Links, e.p.Nofollow...)
		e.p.NofollowURLs = append(e.p.LinkURLs, e.p.NofollowURLs...)
		e.p.LinkURLs = nil
		e.p.Links = nil
	}
	return e.p
}

func (e *extractor) scan(b []byte) {
	var attrs [4]string // href/src/content, rel, name, http-equiv
	var got [4]bool     // the tokenizer keeps the first of duplicate attributes
	i := 0
	text := 0 // where the text not yet given to the signer starts
	for {
		if i >= len(b) {
			e.sigText(b, text, len(b), false)
			return
		}
		j := bytes.IndexByte(b[i:], '<')
		if j < 0 {
			e.sigText(b, text, len(b), false)
			return
		}
		lt := i + j
		i = lt + 1
		if i >= len(b) {
			e.sigText(b, text, len(b), false)
			return
		}
		c := b[i]
		switch {
		case c == '!':
			e.sigText(b, text, lt, false)
			if bytes.HasPrefix(b[i:], []byte("!--")) {
				i = commentEnd(b, i+3)
			} else { // doctype, bogus comment: up to '>'
				i = skipTo(b, i, '>')
			}
			text = i
			continue
		case c == '?':
			e.sigText(b, text, lt, false)
			i = skipTo(b, i, '>')
			text = i
			continue
		case c == '/':
			e.sigText(b, text, lt, false)
			if i+1 < len(b) && isLetter(b[i+1]) {
				k := i + 1
				for k < len(b) && !isSpace(b[k]) && b[k] != '/' && b[k] != '>' {
					k++
				}
				i = tagEnd(b, k, nil, nil) // an end tag: attributes ignored
				if i > len(b) {
					return
				}
				e.sigTag(b[lt+2:k], true, false, i)
			} else if i+1 < len(b) && b[i+1] == '>' {
				i += 2
			} else {
				i = skipTo(b, i, '>') // bogus comment
			}
			text = i
			continue
		case !isLetter(c):
			continue // a '<' in text
		}
		e.sigText(b, text, lt, false)
		// A start tag: its name, then attributes for the tags we need.
		k := i
		for k < len(b) && !isSpace(b[k]) && b[k] != '/' && b[k] != '>' {
			k++
		}
		name := lowerName(b[i:k])
		want := wanted(name)
		attrs, got = [4]string{}, [4]bool{}
		var selfClosing bool
		if want != "" {
			i, selfClosing = tagEndSelf(b, k, &e.lower, func(key, val []byte) {
				n := -1
				switch string(key) {
				case want:
					n = 0
				case "rel":
					n = 1
				case "name":
					n = 2
				case "http-equiv":
					n = 3
				}
				if n >= 0 && !got[n] {
					got[n], attrs[n] = true, attrValue(val)
				}
			})
		} else {
			i, selfClosing = tagEndSelf(b, k, nil, nil)
		}
		if i > len(b) {
			return // unterminated tag: the tokenizer drops it
		}
		if want != "" {
			e.tag(name, attrs[0], got[0], attrs[1], attrs[2], attrs[3])
		}
		e.sigTag(b[lt+1:k], false, selfClosing, i)
		text = i
		if e.sig != nil && name == "noscript" && i >= e.mute {
			// Raw text for the tokenizer: its tags are not the signer's.
			// The signer gets its text and end tag here and nothing of what
			// the scanner finds up to the end of that end tag.
			end, mute := rawEnd(b, i, name), len(b)
			if te := tagEnd(b, end+2+len(name), nil, nil); end < len(b) && end+2+len(name) < len(b) {
				e.sigText(b, i, end, true)
				e.sigTag(b[end+2:end+2+len(name)], true, false, te)
				mute = te
			} else {
				e.sigText(b, i, len(b), true)
			}
			e.mute = mute
			text = mute
		}
		if rawText(name) {
			if name == "plaintext" {
				e.sigText(b, i, len(b), true)
				return
			}
			end := rawEnd(b, i, name)
			sigEnd := end
			if end < len(b) && end+2+len(name) == len(b) {
				sigEnd = len(b) // an end tag cut by the end of the page is text to the tokenizer
			}
			e.sigText(b, i, sigEnd, name != "title" && name != "textarea")
			text = end
			if name == "title" && !e.hasTitle && !selfClosing {
				e.hasTitle = true
				t := b[i:end]
				if len(t) > 4*e.opt.MaxTitle {
					t = t[:4*e.opt.MaxTitle]
				}
				e.title = []byte(unescapeText(t))
			}
			i = end
		}
	}
}

// sigText gives the signer the text b[from:to] (within its limit),
// newlines normalised and character references decoded unless the text is
// raw (script, style...), as the tokenizer's Text does.
func (e *extractor) sigText(b []byte, from, to int, raw bool) {
	if e.sig == nil || e.sig.Full() {
		return
	}
	to = min(to, e.sigLimit)
	if from >= to {
		return
	}
	if from < e.mute {
		if to <= e.mute {
			return
		}
		from = e.mute
	}
	t := b[from:to]
	if bytes.IndexByte(t, '\r') >= 0 {
		t = bytes.ReplaceAll(bytes.ReplaceAll(t, []byte("\r\n"), []byte("\n")), []byte("\r"), []byte("\n"))
	}
	if !raw && bytes.IndexByte(t, '&') >= 0 {
		t = []byte(html.UnescapeString(string(t)))
	}
	e.sig.Text(t)
}

// sigTag gives the signer a tag ending at end, by its name as written.
func (e *extractor) sigTag(name []byte, end, selfClosing bool, tagEnd int) {
	if e.sig == nil || tagEnd > e.sigLimit || tagEnd <= e.mute || e.sig.Full() {
		return
	}
	var low [16]byte
	if len(name) > len(low) {
		e.sig.Tag(bytes.ToLower(name), end, selfClosing)
		return
	}
	n := copy(low[:], name)
	for j := 0; j < n; j++ {
		if c := low[j]; c >= 'A' && c <= 'Z' {
			low[j] = c + 'a' - 'A'
		}
	}
	e.sig.Tag(low[:n], end, selfClosing)
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

// tag takes a tag's attributes: ref is its URL attribute (hasRef: present).
func (e *extractor) tag(name, ref string, hasRef bool, rel, metaName, httpEquiv string) {
	rel, metaName = strings.ToLower(rel), strings.ToLower(metaName)
	switch name {
	case "meta":
		if metaName != "" {
			e.robots.Meta(metaName, ref)
		}
		if strings.EqualFold(strings.TrimSpace(httpEquiv), "refresh") {
			if delay, target, ok := directives.ParseRefresh(ref); ok && target != "" {
				e.found = append(e.found, found{kind: 'r', ref: target, delay: delay})
			}
		}
	case "base":
		// The document base URL is the first <base> with an href.
		if !e.baseSet && hasRef {
			e.baseRef, e.baseSet = ref, true
		}
	case "link":
		if hasWord(rel, "canonical") {
			e.found = append(e.found, found{kind: 'c', ref: ref})
			return
		}
		fallthrough
	default:
		if !hasRef {
			return
		}
		// A reference seen before resolves to a link already taken or
		// dropped: only its first occurrence counts.
		if _, dup := e.refs[ref]; dup {
			return
		}
		if len(e.refs) >= 2*e.opt.MaxLinks {
			e.p.Cut++
			return
		}
		e.refs[ref] = struct{}{}
		e.found = append(e.found, found{kind: 'a', ref: ref, rel: rel})
	}
}

// resolveAll resolves what the scan found against the document base URL.
func (e *extractor) resolveAll() {
	base, httpBase := e.page, true
	if e.baseSet {
		// A base that does not parse leaves the page URL; one of another
		// scheme (ftp:, data:) leaves only absolute http(s) links.
		b, err := e.page.ResolveIn(e.baseRef, e.opt.Encoding)
		switch {
		case err == nil:
			base = b
		case errors.Is(err, weburl.ErrScheme):
			httpBase = false
		}
	}
	sameDoc := base == e.page
	// Parsed once for the references the fast path leaves to the parser.
	base = base.Prepared()
	// The scan kept each link reference once, so each is resolved once
	// (a canonical or refresh URL may repeat one: resolved again).
	e.seen = make(map[string]struct{}, len(e.found))
	for _, f := range e.found {
		u := resolve(base, httpBase, sameDoc, f.ref, e.opt.Encoding)
		if u == nil {
			continue
		}
		abs := u.String()
		switch f.kind {
		case 'c':
			if e.p.Canonical == "" {
				e.p.Canonical = abs
			}
		case 'r':
			if e.p.Refresh == "" {
				e.p.Refresh, e.p.RefreshDelay = abs, f.delay
				e.link(abs, u, "")
			}
		default:
			e.link(abs, u, f.rel)
		}
	}
}

func (e *extractor) link(abs string, u *weburl.URL, rel string) {
	if _, dup := e.seen[abs]; dup {
		return
	}
	if len(e.p.Links)+len(e.p.Nofollow) >= e.opt.MaxLinks {
		e.p.Cut++
		return
	}
	e.seen[abs] = struct{}{}
	if hasWord(rel, "nofollow") {
		e.p.Nofollow = append(e.p.Nofollow, abs)
		e.p.NofollowURLs = append(e.p.NofollowURLs, u)
	} else {
		e.p.Links = append(e.p.Links, abs)
		e.p.LinkURLs = append(e.p.LinkURLs, u)
	}
}

// tagEnd reads the attributes of a tag from b[i:] (just past its name) and
// returns the offset after its '>' (len(b)+1 if there is none). attr, if not
// nil, gets each lower-cased name (in lower, the caller's buffer: a local
// one would escape to the heap at every tag) and its raw value (nil when
// the attribute has no value).
func tagEnd(b []byte, i int, lower *[32]byte, attr func(key, val []byte)) int {
	end, _ := tagEndSelf(b, i, lower, attr)
	return end
}

// tagEndSelf is tagEnd that also says whether the tag is self-closing as
// the tokenizer decides it: it ends in "/>", and that '/' is not the end of
// an unquoted attribute value (<p a=/>).
func tagEndSelf(b []byte, i int, lower *[32]byte, attr func(key, val []byte)) (int, bool) {
	unquotedEnd := -1
	for {
		for i < len(b) && (isSpace(b[i]) || b[i] == '/') {
			i++
		}
		if i >= len(b) {
			return len(b) + 1, false
		}
		if b[i] == '>' {
			return i + 1, b[i-1] == '/' && unquotedEnd != i
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
				return len(b) + 1, false
			}
			if q := b[i]; q == '"' || q == '\'' {
				end := bytes.IndexByte(b[i+1:], q)
				if end < 0 {
					return len(b) + 1, false
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
				unquotedEnd = k
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

// attrValue returns an attribute value as the tokenizer does: character
// references decoded by the attribute rule (a legacy name without ";"
// before "=" or an alphanumeric stays as written: "?a=1&not=2"), NUL as
// U+FFFD, CR and CRLF as LF. Values with none of these are the common case;
// the others go through x/net/html's own tokenizer.
func attrValue(v []byte) string {
	if bytes.IndexByte(v, '&') < 0 && bytes.IndexByte(v, 0) < 0 && bytes.IndexByte(v, '\r') < 0 {
		return string(v)
	}
	var b []byte
	b = append(b, `<a v="`...)
	for _, c := range v {
		if c == '"' {
			b = append(b, "&quot;"...)
		} else {
			b = append(b, c)
		}
	}
	b = append(b, `">`...)
	z := html.NewTokenizer(bytes.NewReader(b))
	z.Next()
	_, val, _ := z.TagAttr()
	return string(val)
}

// unescapeText decodes the text of a title (RCDATA) as the tokenizer does.
func unescapeText(v []byte) string {
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

// resolve makes ref absolute against base as the URL Standard does, in
// the page's encoding (its String is the request form, no fragment); nil
// for anything that is not an http(s) URL, and for a reference to the page
// itself ("", "#top") when the base is the page.
func resolve(base *weburl.URL, httpBase, sameDoc bool, ref string, enc encoding.Encoding) *weburl.URL {
	if sameDoc {
		r := strings.Map(func(c rune) rune {
			if c == '\t' || c == '\n' || c == '\r' {
				return -1
			}
			return c
		}, strings.TrimFunc(ref, func(c rune) bool { return c <= ' ' }))
		if r == "" || r[0] == '#' {
			return nil
		}
	}
	var u *weburl.URL
	var err error
	if httpBase {
		u, err = base.ResolveIn(ref, enc)
	} else {
		u, err = weburl.Parse(ref)
	}
	if err != nil {
		return nil
	}
	return u
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
