// Package htmldoc turns an HTML page into what the barrel indexer needs: the
// words of its text with their relative font size and capitalisation, its
// title and meta words, and its links with their anchor text. It parses with
// golang.org/x/net/html's tokenizer, which survives the broken markup of the
// web (unclosed tags, stray bytes, deep nesting) without building a tree.
package htmldoc

import (
	"bytes"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/sekitei/crawlkit/pkg/barrel/analysis"
)

// MaxWordLen is the longest word kept, in bytes; longer tokens are cut.
const MaxWordLen = 48

// Font sizes, relative to the document's normal text (the 3-bit field of a
// plain hit): 0 small, 1 normal, 2 bold or h5/h6, up to 6 for h1.
const (
	FontSmall  = 0
	FontNormal = 1
	FontBold   = 2
)

// Word is one word of the text: Start and End are its bytes in Doc.Text;
// Doc.Key returns its lower-cased form (its term, with an Analyzer), and
// Doc.Whole the identifier it begins, if any.
type Word struct {
	Start, End     int32
	key0, key1     int32
	whole0, whole1 int32
	Font           uint8
	Capital        bool
	// Emph says the word is set off in running text: inside <em>, <i>,
	// <dfn>, <strong> or <b> (a term introduced in italics, Sphinx's
	// <em class="dfn">), in a run of at most MaxEmphWords words that
	// links to no other page. A run of more is emphasis of a sentence,
	// not of a term; a link to another page names that page's term
	// (Sphinx's glossary references), and a signature's parameters and
	// properties (<em class="sig-param">, "property") are not emphasis.
	Emph bool
	// Dfn says the run is a definition's markup: <dfn>, or <em
	// class="dfn"> (Sphinx's :dfn:, a term introduced where it is
	// defined).
	Dfn bool
}

// MaxEmphWords is the longest run of emphasised words whose words are
// Emph.
const MaxEmphWords = 6

// Link is an outgoing link with its anchor text.
type Link struct {
	URL  string
	Text string
}

// Doc is a parsed page.
type Doc struct {
	Title string
	Text  []byte // visible body text, runs separated by spaces
	Words []Word // body words in order
	Meta  string // meta description and keywords
	// Defs are the terms the page defines, one a line: the leading text
	// of each <dt> (a glossary's term, an API's name before its
	// parameters) or its id when that says more, a qualified name by its
	// last part: <dt id="os.umask">os.umask(mask)</dt> defines "umask".
	Defs  string
	Links []Link
	// Canonical is the href of the first <link rel="canonical">, resolved
	// against the page's base ("" if none).
	Canonical string
	// Metas are the name and content of the page's other named metas
	// (robots directives among them), for the caller to interpret.
	Metas [][2]string
	// Analyzer, when set, makes the words' keys the terms of its analysis
	// (stemmed, identifiers kept whole too); else they are lower-cased.
	Analyzer *analysis.Analyzer
	// MaxWords, when above 0, stops the parse once the body has that many
	// words (a snippet's reader needs the start of a big page, not all of
	// it); Truncated then says the page went on.
	MaxWords  int
	Truncated bool

	keys  []byte
	whole [2]int32 // the identifier whole waiting for its first part
}

// Reset empties d for reuse, keeping its buffers.
func (d *Doc) Reset() {
	d.Title, d.Meta, d.Canonical, d.Defs = "", "", "", ""
	d.Metas = d.Metas[:0]
	d.Text = d.Text[:0]
	d.Words = d.Words[:0]
	d.Links = d.Links[:0]
	d.keys = d.keys[:0]
	d.whole = [2]int32{}
}

type fontTag struct {
	a    atom.Atom
	font uint8
}

const maxStack = 256

// Parse parses page, fetched from base (used to resolve links; may be nil),
// into d. It never fails: whatever is not HTML is read as text.
func (d *Doc) Parse(page []byte, base *url.URL) {
	d.Reset()
	d.Truncated = false
	z := html.NewTokenizer(bytes.NewReader(page))
	z.SetMaxBuf(0)
	var (
		stack    []fontTag
		font     uint8     = FontNormal
		skip     atom.Atom // inside script/style/...
		inTitle  bool
		title    strings.Builder
		meta     strings.Builder
		inAnchor = -1 // index in d.Links of the open anchor
		anchor   strings.Builder
		sawBase  bool
		self     string // pageURL(base), made once a base
		defs     defs
		emph     emphRun
	)
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			if inAnchor >= 0 {
				d.Links[inAnchor].Text = clip(collapse(anchor.String()), 200)
			}
			d.Title = clip(collapse(title.String()), 500)
			d.Meta = clip(meta.String(), 2000)
			d.Defs = defs.finish()
			emph.finish(d.Words)
			d.relativeFonts()
			return
		case html.TextToken:
			if skip != 0 {
				continue
			}
			t := z.Text()
			if inTitle {
				title.Write(t)
				continue
			}
			if inAnchor >= 0 && anchor.Len() < 400 {
				anchor.Write(t)
				anchor.WriteByte(' ')
			}
			defs.add(t)
			n := len(d.Words)
			d.addText(t, font)
			if emph.depth > 0 && !emph.ref {
				for i := n; i < len(d.Words); i++ {
					d.Words[i].Emph, d.Words[i].Dfn = true, emph.dfn
				}
			}
			if d.MaxWords > 0 && len(d.Words) >= d.MaxWords {
				d.Truncated = true
				d.Title = clip(collapse(title.String()), 500)
				d.Meta = clip(meta.String(), 2000)
				d.Defs = defs.finish()
				emph.finish(d.Words)
				return
			}
		case html.StartTagToken, html.SelfClosingTagToken:
			name, hasAttr := z.TagName()
			a := atom.Lookup(name)
			switch a {
			case atom.Script, atom.Style, atom.Noscript, atom.Template, atom.Svg, atom.Math, atom.Textarea, atom.Select:
				if tt == html.StartTagToken && skip == 0 {
					skip = a
				}
				continue
			case atom.Title:
				inTitle = tt == html.StartTagToken && title.Len() == 0
				continue
			case atom.Meta:
				if hasAttr {
					d.meta(z, &meta)
				}
				continue
			case atom.Link:
				if hasAttr && d.Canonical == "" {
					d.link(z, base)
				}
				continue
			case atom.Base:
				if hasAttr && !sawBase {
					if h := attr(z, "href"); h != "" {
						if u, err := resolve(base, h); err == nil {
							base, sawBase, self = u, true, ""
						}
					}
				}
				continue
			case atom.A:
				if inAnchor >= 0 { // an unclosed anchor ends at the next
					d.Links[inAnchor].Text = clip(collapse(anchor.String()), 200)
					inAnchor = -1
				}
				if hasAttr && tt == html.StartTagToken {
					if h := attr(z, "href"); h != "" {
						if u, ok := linkURL(base, h); ok {
							d.Links = append(d.Links, Link{URL: u})
							inAnchor = len(d.Links) - 1
							anchor.Reset()
							if base != nil && self == "" {
								self = pageURL(base)
							}
							if base == nil || u != self {
								defs.link()
								emph.link(len(d.Words))
							}
						}
					}
				}
				continue
			case atom.Img:
				if hasAttr && inAnchor >= 0 && anchor.Len() < 400 {
					alt := attr(z, "alt")
					anchor.WriteString(alt)
					anchor.WriteByte(' ')
				}
				continue
			}
			if tt == html.SelfClosingTagToken {
				continue
			}
			defs.startTag(z, a, hasAttr)
			emph.startTag(z, a, hasAttr, len(d.Words))
			if f, ok := fontOf(z, a, hasAttr, font); ok && len(stack) < maxStack {
				stack = append(stack, fontTag{a, font})
				font = f
			}
			if isBlock(a) {
				d.Text = append(d.Text, ' ')
			}
		case html.EndTagToken:
			name, _ := z.TagName()
			a := atom.Lookup(name)
			switch {
			case skip != 0:
				if a == skip {
					skip = 0
				}
				continue
			case a == atom.Title:
				inTitle = false
				continue
			case a == atom.A:
				if inAnchor >= 0 {
					d.Links[inAnchor].Text = clip(collapse(anchor.String()), 200)
					inAnchor = -1
				}
				emph.endTag(a, d.Words)
				continue
			}
			defs.endTag(a)
			emph.endTag(a, d.Words)
			for i := len(stack) - 1; i >= 0; i-- {
				if stack[i].a == a {
					font = stack[i].font
					stack = stack[:i]
					break
				}
			}
			if isBlock(a) {
				d.Text = append(d.Text, ' ')
			}
		}
	}
}

func (d *Doc) meta(z *html.Tokenizer, meta *strings.Builder) {
	var name, content string
	for {
		k, v, more := z.TagAttr()
		switch string(k) {
		case "name", "property":
			name = strings.ToLower(string(v))
		case "content":
			content = string(v)
		}
		if !more {
			break
		}
	}
	switch name {
	case "description", "keywords", "og:description":
		if meta.Len() < 2000 {
			meta.WriteString(content)
			meta.WriteByte(' ')
		}
	case "":
	default:
		if len(d.Metas) < 64 {
			d.Metas = append(d.Metas, [2]string{name, content})
		}
	}
}

// link reads a <link>: a rel="canonical" sets d.Canonical.
func (d *Doc) link(z *html.Tokenizer, base *url.URL) {
	var rel, href string
	for {
		k, v, more := z.TagAttr()
		switch string(k) {
		case "rel":
			rel = strings.ToLower(string(v))
		case "href":
			href = strings.TrimSpace(string(v))
		}
		if !more {
			break
		}
	}
	if href == "" || !slices.Contains(strings.Fields(rel), "canonical") {
		return
	}
	if u, ok := linkURL(base, href); ok {
		d.Canonical = u
	}
}

func attr(z *html.Tokenizer, want string) string {
	for {
		k, v, more := z.TagAttr()
		if string(k) == want {
			return strings.TrimSpace(string(v))
		}
		if !more {
			return ""
		}
	}
}

// fontOf returns the font size inside the element a that starts now.
func fontOf(z *html.Tokenizer, a atom.Atom, hasAttr bool, cur uint8) (uint8, bool) {
	switch a {
	case atom.H1:
		return 6, true
	case atom.H2:
		return 5, true
	case atom.H3:
		return 4, true
	case atom.H4:
		return 3, true
	case atom.H5, atom.H6:
		return 2, true
	case atom.B, atom.Strong, atom.Th, atom.Dt:
		return max(cur, FontBold), true
	case atom.Big:
		return min(cur+1, 6), true
	case atom.Small, atom.Sub, atom.Sup:
		return FontSmall, true
	case atom.Font:
		if !hasAttr {
			return cur, true
		}
		s := attr(z, "size")
		if s == "" {
			return cur, true
		}
		var f int
		if s[0] == '+' || s[0] == '-' {
			n, err := strconv.Atoi(s)
			if err != nil {
				return cur, true
			}
			f = int(cur) + n
		} else {
			n, err := strconv.Atoi(s)
			if err != nil {
				return cur, true
			}
			f = n - 2 // size 3 is normal text
		}
		return uint8(min(max(f, 0), 6)), true
	}
	return 0, false
}

func isBlock(a atom.Atom) bool {
	switch a {
	case atom.P, atom.Div, atom.Br, atom.Li, atom.Td, atom.Th, atom.Tr, atom.H1, atom.H2, atom.H3,
		atom.H4, atom.H5, atom.H6, atom.Section, atom.Article, atom.Header, atom.Footer, atom.Nav,
		atom.Dt, atom.Dd, atom.Pre, atom.Blockquote, atom.Table, atom.Ul, atom.Ol, atom.Dl:
		return true
	}
	return false
}

// relativeFonts makes the words' font sizes relative to the rest of the
// document, as the 1998 paper has them: the size most of the text is in
// becomes normal, and the others keep their distance from it (a page
// written all in <font size=4> has normal text, and its <h1> stays large).
func (d *Doc) relativeFonts() {
	var n [7]int
	for i := range d.Words {
		n[d.Words[i].Font]++
	}
	base := uint8(FontNormal)
	for f := range n {
		if n[f] > n[base] {
			base = uint8(f)
		}
	}
	if base == FontNormal {
		return
	}
	for i := range d.Words {
		f := int(d.Words[i].Font) - int(base) + FontNormal
		d.Words[i].Font = uint8(min(max(f, FontSmall), 6))
	}
}

// addText appends text to d.Text and its words to d.Words.
func (d *Doc) addText(t []byte, font uint8) {
	off := len(d.Text)
	d.Text = append(d.Text, t...)
	if d.Analyzer != nil {
		d.Analyzer.Tokens(d.Text[off:], func(tk analysis.Token) {
			k0 := int32(len(d.keys))
			d.keys = append(d.keys, tk.Term...)
			if tk.Whole {
				d.whole = [2]int32{k0, int32(len(d.keys))}
				return
			}
			d.Words = append(d.Words, Word{
				Start: int32(off + tk.Start), End: int32(off + tk.End),
				key0: k0, key1: int32(len(d.keys)), whole0: d.whole[0], whole1: d.whole[1],
				Font: font, Capital: tk.Capital,
			})
			d.whole = [2]int32{}
		})
		return
	}
	Tokenize(d.Text[off:], func(start, end int, key []byte, capital bool) {
		k0 := len(d.keys)
		d.keys = append(d.keys, key...)
		d.Words = append(d.Words, Word{
			Start: int32(off + start), End: int32(off + end),
			key0: int32(k0), key1: int32(len(d.keys)), Font: font, Capital: capital,
		})
	})
}

// KeyBytes returns the total length of the words' keys.
func (d *Doc) KeyBytes() int { return len(d.keys) }

// Key returns the lower-cased form of w, a word of d (its term, with an
// Analyzer).
func (d *Doc) Key(w *Word) []byte { return d.keys[w.key0:w.key1:w.key1] }

// Whole returns the term of the identifier w is the first part of, or nil.
func (d *Doc) Whole(w *Word) []byte {
	if w.whole1 == 0 {
		return nil
	}
	return d.keys[w.whole0:w.whole1:w.whole1]
}

// Tokenize calls fn for each word of text: its byte range, its lower-cased
// key (valid only during the call) and whether it starts with a capital.
// Words are runs of letters and digits; marks inside words are kept.
func Tokenize(text []byte, fn func(start, end int, key []byte, capital bool)) {
	var buf [MaxWordLen + utf8.UTFMax]byte
	i := 0
	for i < len(text) {
		c := text[i]
		if c < utf8.RuneSelf {
			if !isASCIIWord(c) {
				i++
				continue
			}
		} else if r, n := utf8.DecodeRune(text[i:]); !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			i += n
			continue
		}
		start := i
		key := buf[:0]
		capital := false
		for i < len(text) {
			c := text[i]
			if c < utf8.RuneSelf {
				if !isASCIIWord(c) {
					break
				}
				if 'A' <= c && c <= 'Z' {
					if i == start {
						capital = true
					}
					c += 'a' - 'A'
				}
				if len(key) < MaxWordLen {
					key = append(key, c)
				}
				i++
				continue
			}
			r, n := utf8.DecodeRune(text[i:])
			if !unicode.IsLetter(r) && !unicode.IsDigit(r) && !unicode.Is(unicode.Mn, r) {
				break
			}
			if i == start && unicode.IsUpper(r) {
				capital = true
			}
			if len(key) < MaxWordLen {
				key = utf8.AppendRune(key, unicode.ToLower(r))
			}
			i += n
		}
		fn(start, i, key, capital)
	}
}

func isASCIIWord(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// Words returns the lower-cased words of s.
func Words(s string) []string {
	var out []string
	Tokenize([]byte(s), func(_, _ int, key []byte, _ bool) { out = append(out, string(key)) })
	return out
}

// URLWords returns the words of a URL's host and path, the text of its URL
// hits.
func URLWords(u string) string {
	if i := strings.Index(u, "://"); i >= 0 {
		u = u[i+3:]
	}
	return u
}

func linkURL(base *url.URL, href string) (string, bool) {
	u, err := resolve(base, href)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", false
	}
	u.Fragment, u.RawFragment = "", ""
	return u.String(), true
}

// pageURL is u without its fragment, as linkURL makes a link's URL.
func pageURL(u *url.URL) string {
	c := *u
	c.Fragment, c.RawFragment = "", ""
	return c.String()
}

func resolve(base *url.URL, href string) (*url.URL, error) {
	u, err := url.Parse(href)
	if err != nil {
		return nil, err
	}
	// An absolute reference whose path has no dot segment resolves to
	// itself (RFC 3986, 5.2.2), and ResolveReference's copy and path
	// rebuild cost a page with many absolute links a tenth of its parse.
	if base != nil && (u.Scheme == "" || hasDotSegment(u.EscapedPath())) {
		u = base.ResolveReference(u)
	}
	return u, nil
}

// hasDotSegment reports whether path has a "." or ".." segment.
func hasDotSegment(path string) bool {
	for path != "" {
		seg, rest, _ := strings.Cut(path, "/")
		if seg == "." || seg == ".." {
			return true
		}
		path = rest
	}
	return false
}

// collapse is strings.Join(strings.Fields(s), " "), without the slice of
// fields: it runs on every link's anchor text.
func collapse(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for f := range strings.FieldsSeq(s) {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(f)
	}
	return b.String()
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// Limits of the definitions: the leading text of one element, and all of
// a page's.
const (
	maxDefText = 120
	maxDefs    = 32 << 10
)

// defs collects the terms a page defines (Doc.Defs): the leading text of
// each <dt> up to what starts a signature's parameters or a value ('(',
// '[', '=', ':'), with the element's id when that says more. A <dt> whose
// leading text links to another page names that page ("See also: Module
// configparser"), not a term of this one, and is left out; a link to a
// place in the page itself (a permalink) is not a reference. Headings are
// not definitions: a section titled "Why are strings immutable?" is about
// the word, and the heading hits weigh it already.
type defs struct {
	out  strings.Builder
	open bool // a <dt>'s text is being read
	text []byte
	id   string
	done bool // the leading text has ended
	// ref says the leading text holds a link to another page: the entry
	// names that page ("See also: Module configparser"), and is left out.
	ref bool
}

// link notes a link to another page, read inside the open entry's
// leading text.
func (s *defs) link() {
	if s.open && !s.done {
		s.ref = true
	}
}

// startTag notes an element's start: a <dt> opens an entry, closing an
// open one, and a <dd> or <dl> closes it.
func (s *defs) startTag(z *html.Tokenizer, a atom.Atom, hasAttr bool) {
	switch {
	case a == atom.Dt:
		s.end()
		s.open, s.text, s.id, s.done, s.ref = true, s.text[:0], "", false, false
		if hasAttr {
			s.id = attr(z, "id")
		}
	case a == atom.Dd || a == atom.Dl:
		s.end()
	}
}

// endTag closes the open entry at the end of its <dt> (or of its list).
func (s *defs) endTag(a atom.Atom) {
	if a == atom.Dt || a == atom.Dl {
		s.end()
	}
}

// add reads text inside the open entry.
func (s *defs) add(t []byte) {
	if !s.open || s.done {
		return
	}
	if i := bytes.IndexAny(t, "([=:"); i >= 0 {
		t, s.done = t[:i], true
	}
	if n := maxDefText - len(s.text); len(t) > n {
		cut := t[:max(n, 0)]
		if !unicode.IsSpace(rune(t[len(cut)])) { // not a word's part
			cut = cut[:max(bytes.LastIndexAny(cut, " \t\n\r\f"), 0)]
		}
		t, s.done = cut, true
	}
	s.text = append(s.text, t...)
}

// end writes the open entry: its text, or its id when the id holds the
// text and more, or both when neither holds the other.
func (s *defs) end() {
	if !s.open {
		return
	}
	s.open = false
	if s.ref {
		return
	}
	text, id := lastParts(string(s.text)), lastParts(s.id)
	tn, in := letters(text), letters(id)
	var entry string
	switch {
	case in == "" || strings.Contains(tn, in):
		entry = text
	case tn == "" || strings.Contains(in, tn):
		entry = id
	default:
		entry = text + " " + id
	}
	if entry == "" || s.out.Len()+len(entry) >= maxDefs {
		return
	}
	s.out.WriteString(entry)
	s.out.WriteByte('\n')
}

// lastParts is s with its words collapsed and a qualified name by its
// last part: "os.umask" defines umask, not os (every function of the
// module would define os).
func lastParts(s string) string {
	ws := strings.Fields(s)
	for i, w := range ws {
		if j := strings.LastIndexByte(strings.TrimRight(w, "."), '.'); j >= 0 {
			ws[i] = w[j+1:]
		}
	}
	return strings.Join(ws, " ")
}

// finish closes the open entry and returns the definitions.
func (s *defs) finish() string {
	s.end()
	return s.out.String()
}

// letters is s lower-cased, with only its letters and digits.
func letters(s string) string {
	var b strings.Builder
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return b.String()
}

// emphRun marks the words of an emphasised run (Word.Emph): the
// outermost <em>, <i>, <dfn>, <strong> or <b> open, its words marked as
// they are read and unmarked at its end if the run is longer than
// MaxEmphWords or holds a link to another page.
type emphRun struct {
	tag   atom.Atom // the outermost emphasis element open
	depth int       // emphasis elements of that kind open
	start int       // the run's first word
	ref   bool      // the run holds a link to another page
	dfn   bool      // the run is a <dfn> or an <em class="dfn">
	// linkAt is the word count when a link to another page was last
	// opened: an emphasis starting at it sits inside that link.
	linkAt int
	inLink bool
}

// startTag notes an element's start.
func (e *emphRun) startTag(z *html.Tokenizer, a atom.Atom, hasAttr bool, words int) {
	switch a {
	case atom.Em, atom.I, atom.Dfn, atom.Strong, atom.B:
	default:
		return
	}
	if e.depth > 0 {
		if a == e.tag {
			e.depth++
		}
		return
	}
	dfn := a == atom.Dfn
	if hasAttr {
		for _, c := range strings.Fields(attr(z, "class")) {
			if c == "property" || strings.HasPrefix(c, "sig-") {
				return // a signature's parameter, a "class" or "static" before a name
			}
			dfn = dfn || c == "dfn"
		}
	}
	e.tag, e.depth, e.start, e.ref, e.dfn = a, 1, words, e.inLink && e.linkAt == words, dfn
}

// finish ends a run left open by the page's end.
func (e *emphRun) finish(ws []Word) {
	if e.depth > 0 {
		e.depth = 1
		e.endTag(e.tag, ws)
	}
}

// link notes a link to another page, opened at the words-th word.
func (e *emphRun) link(words int) {
	e.inLink, e.linkAt = true, words
	if e.depth > 0 {
		e.ref = true
	}
}

// endTag notes an element's end: the run's end unmarks its words if it
// is too long or a reference.
func (e *emphRun) endTag(a atom.Atom, ws []Word) {
	if a == atom.A {
		e.inLink = false
		return
	}
	if e.depth == 0 || a != e.tag {
		return
	}
	if e.depth--; e.depth > 0 {
		return
	}
	if e.ref || len(ws)-e.start > MaxEmphWords {
		for i := e.start; i < len(ws); i++ {
			ws[i].Emph, ws[i].Dfn = false, false
		}
	}
}
