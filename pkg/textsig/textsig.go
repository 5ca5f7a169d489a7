// Package textsig signs the main text of an HTML page, so that a crawler
// can tell a meaningful change from a new clock, visitor counter or banner.
// "Crawling the internet: data science within a large engineering system"
// (Richoux, 2018) makes the point that the change rate to estimate is that
// of meaningful changes.
//
// MainText keeps the text of the page's content blocks: script, style,
// navigation, header, footer, aside, forms and similar elements are
// dropped, and so is a block whose text is mostly link text (menus,
// banners, "related" lists). Words then lose numbers and dates: a word with
// a digit is dropped, and so are month and weekday names (English and
// Russian). SimHash ("Similarity estimation techniques from rounding
// algorithms", Charikar, 2002; used for near-duplicate pages in "Detecting
// near-duplicates for web crawling", Manku, Jain and Das Sarma, 2007) of
// the word pairs gives a 64-bit signature whose Hamming distance (Distance)
// grows with how much of the text changed.
//
// The SimHash is written here (no maintained Go module for it is served by
// the module proxy); the tests hold it to a slow reference implementation.
package textsig

import (
	"bytes"
	"math/bits"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// DefaultThreshold is the Hamming distance above which two signatures are
// taken for a meaningful change: Manku et al. found 3 of 64 bits right for
// near-duplicate web pages.
const DefaultThreshold = 3

// skipped are elements whose text is never main text. (A switch, not a
// map: it is asked for every tag of every page fetched.)
func skipped(a atom.Atom) bool {
	switch a {
	case atom.Script, atom.Style, atom.Noscript, atom.Template, atom.Svg,
		atom.Nav, atom.Header, atom.Footer, atom.Aside, atom.Form,
		atom.Select, atom.Option, atom.Button, atom.Iframe, atom.Object,
		atom.Textarea, atom.Head, atom.Time, atom.Menu:
		return true
	}
	return false
}

// blocks end a text block.
func blocks(a atom.Atom) bool {
	switch a {
	case atom.P, atom.Div, atom.Li, atom.Td, atom.Th, atom.Tr,
		atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6,
		atom.Article, atom.Section, atom.Main, atom.Blockquote, atom.Pre,
		atom.Ul, atom.Ol, atom.Dl, atom.Dd, atom.Dt, atom.Table,
		atom.Br, atom.Hr, atom.Body, atom.Figcaption, atom.Address:
		return true
	}
	return false
}

// maxLinkDensity is the share of a block's text inside links above which
// the block is boilerplate.
const maxLinkDensity = 0.5

// MainText returns the main text of a UTF-8 HTML page, blocks separated
// by newlines.
func MainText(page []byte) string {
	var out strings.Builder
	var block, linked strings.Builder
	skip, inLink := 0, 0
	flush := func() {
		text := strings.Join(strings.Fields(block.String()), " ")
		lt := len(strings.Join(strings.Fields(linked.String()), " "))
		if text != "" && float64(lt) <= maxLinkDensity*float64(len(text)) {
			out.WriteString(text)
			out.WriteByte('\n')
		}
		block.Reset()
		linked.Reset()
	}
	z := html.NewTokenizer(bytes.NewReader(page))
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			flush()
			return out.String()
		case html.TextToken:
			if skip == 0 {
				t := z.Text()
				block.Write(t)
				block.WriteByte(' ')
				if inLink > 0 {
					linked.Write(t)
					linked.WriteByte(' ')
				}
			}
		case html.StartTagToken, html.EndTagToken, html.SelfClosingTagToken:
			name, _ := z.TagName()
			a := atom.Lookup(name)
			if blocks(a) {
				flush()
			}
			if tt == html.SelfClosingTagToken {
				continue
			}
			delta := 1
			if tt == html.EndTagToken {
				delta = -1
			}
			switch {
			case skipped(a):
				skip = max(0, skip+delta)
			case a == atom.A:
				inLink = max(0, inLink+delta)
			}
		}
	}
}

// calendar are month and weekday names (English and Russian, in their
// common forms and abbreviations): dates are not content.
var calendar = map[string]bool{}

// maxCalendar is the longest calendar word in bytes; calendarSeen holds
// calendarSlot of every calendar word: a word whose slot is not set needs
// no look-up (nearly every word; hashing each for the map was a twentieth
// of a page's links scan and signature).
var (
	maxCalendar  int
	calendarSeen [4096]bool
)

// calendarSlot mixes a word's length, first two and last bytes.
func calendarSlot(w []byte) int {
	return (len(w)*131 + int(w[0])*31 + int(w[1%len(w)])*7 + int(w[len(w)-1])) & 4095
}

func init() {
	defer func() {
		for w := range calendar {
			maxCalendar = max(maxCalendar, len(w))
			calendarSeen[calendarSlot([]byte(w))] = true
		}
	}()
	for _, w := range strings.Fields(`january february march april may june july august september
		october november december jan feb mar apr jun jul aug sep sept oct nov dec monday tuesday
		wednesday thursday friday saturday sunday mon tue wed thu fri sat sun am pm today yesterday
		январь февраль март апрель май июнь июль август сентябрь октябрь ноябрь декабрь января
		февраля марта апреля мая июня июля августа сентября октября ноября декабря янв фев мар апр
		июн июл авг сен сент окт ноя дек понедельник вторник среда среду четверг пятница пятницу
		суббота субботу воскресенье пн вт ср чт пт сб вс сегодня вчера`) {
		calendar[w] = true
	}
}

// Words splits text into lower-case words of letters, dropping words with
// digits and calendar words.
func Words(text string) []string {
	var words []string
	for _, w := range strings.FieldsFunc(text, isSeparator) {
		w = strings.Trim(w, "'’")
		if w == "" || strings.IndexFunc(w, isDigit) >= 0 {
			continue
		}
		w = strings.Map(lower, w)
		if calendar[w] {
			continue
		}
		words = append(words, w)
	}
	return words
}

// isSeparator, isDigit and lower answer ASCII and Cyrillic (most of the
// pages this toolkit reads) without the Unicode tables.
func isSeparator(r rune) bool {
	switch {
	case r < 0x80:
		return asciiSeparator[r]
	case r >= 0x400 && r <= 0x4ff:
		return false
	}
	return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '’'
}

var asciiSeparator = func() (t [128]bool) {
	for r := range t {
		t[r] = !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '\'')
	}
	return t
}()

func isDigit(r rune) bool {
	if r < 0x80 {
		return r >= '0' && r <= '9'
	}
	return unicode.IsDigit(r)
}

func lower(r rune) rune {
	switch {
	case r >= 'A' && r <= 'Z':
		return r + 'a' - 'A'
	case r < 0x80:
		return r
	case r >= 0x410 && r <= 0x42f: // А-Я
		return r + 0x20
	case r >= 0x400 && r <= 0x40f: // Ѐ-Џ (Ё among them)
		return r + 0x50
	case r >= 0x430 && r <= 0x45f:
		return r
	}
	return unicode.ToLower(r)
}

// Features are the word pairs of words (the single word of a one-word
// text), hashed with 64-bit FNV-1a.
func Features(words []string) []uint64 {
	if len(words) == 1 {
		return []uint64{hash(words[0], "")}
	}
	fs := make([]uint64, 0, len(words))
	for i := 0; i+1 < len(words); i++ {
		fs = append(fs, hash(words[i], words[i+1]))
	}
	return fs
}

// hash is FNV-1a (64 bits) of a, a zero byte and b, written out to
// spare hash/fnv's allocations.
func hash(a, b string) uint64 {
	const offset, prime = 14695981039346656037, 1099511628211
	h := uint64(offset)
	for i := 0; i < len(a); i++ {
		h = (h ^ uint64(a[i])) * prime
	}
	h *= prime // the zero byte
	for i := 0; i < len(b); i++ {
		h = (h ^ uint64(b[i])) * prime
	}
	return h
}

// SimHash returns the SimHash of features: bit i is set when more features
// have bit i set than clear (ties clear). No features give 0.
func SimHash(features []uint64) uint64 {
	var ones [64]int32
	for _, f := range features {
		for f != 0 {
			i := bits.TrailingZeros64(f)
			ones[i]++
			f &= f - 1
		}
	}
	var s uint64
	n := int32(len(features))
	for i, c := range ones {
		if 2*c > n {
			s |= 1 << uint(i)
		}
	}
	return s
}

// MaxPage is how much of a page Signature reads: the main text of a page
// is in its first megabytes, and a bounded read keeps a decompression bomb
// from costing more. A Signer fed by a scanner of its own is given the
// text and tags of a page's first MaxPage bytes.
const MaxPage = 2 << 20

// MaxText bounds the main text signed: the blocks of MainText up to the
// one that brings it to MaxText bytes (a newline counted after each). The
// work per page is bounded by it; a change past the first MaxText bytes of
// a page's main text does not move its signature.
const MaxText = 32 << 10

// Signature is the SimHash of the main text of a UTF-8 HTML page (of its
// first MaxPage bytes, and of the first MaxText bytes of its main text):
// SimHash(Features(Words(MainText(page)))), MainText cut after the block
// that reaches MaxText bytes; computed by a Signer fed by the x/net/html
// tokenizer.
func Signature(page []byte) uint64 {
	if len(page) > MaxPage {
		page = page[:MaxPage]
	}
	var s Signer
	z := html.NewTokenizer(bytes.NewReader(page))
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			return s.Sum()
		case html.TextToken:
			s.Text(z.Text())
		case html.StartTagToken, html.EndTagToken, html.SelfClosingTagToken:
			name, _ := z.TagName()
			s.Tag(name, tt == html.EndTagToken, tt == html.SelfClosingTagToken)
		}
	}
}

// A Signer computes Signature from a page given to it token by token, so
// that a tokenizer that reads the page for something else (links) signs it
// in the same pass. It keeps the text of the current block only and
// allocates nothing per word: words are hashed as they are found and their
// pair features summed into SimHash's bit counts at once. The zero Signer
// is ready; Reset makes one ready again.
type Signer struct {
	skip, inLink int
	block        []byte // the current block's text, text tokens separated by ' '
	// Fields of the block's text and of its link text, as strings.Fields
	// counts them: bytes in fields and fields.
	blockBytes, blockFields, linkBytes, linkFields int
	word                                           []byte // the current word, lower-cased
	ones                                           [64]int32
	// lanes count features' bits 8 to a word (byte k of lanes[j] is bit
	// 8k+j), up to 255 features before they are added to ones.
	lanes       [8]uint64
	inLanes     int
	features    int32
	kept        int // bytes of main text signed, a newline after each block
	words       int
	prev, first uint64 // FNV-1a states after a word and the zero byte
}

// Reset forgets everything the Signer was given, keeping its buffers.
func (s *Signer) Reset() {
	block, word := s.block[:0], s.word[:0]
	*s = Signer{block: block, word: word}
}

// Text takes a text token (character references decoded).
func (s *Signer) Text(t []byte) {
	if s.skip > 0 || s.kept >= MaxText {
		return
	}
	s.block = append(s.block, t...)
	s.block = append(s.block, ' ')
	n, f := fields(t)
	s.blockBytes += n
	s.blockFields += f
	if s.inLink > 0 {
		s.linkBytes += n
		s.linkFields += f
	}
}

// Tag takes a start tag (end false), an end tag (end true) or a
// self-closing tag by its lower-case name.
func (s *Signer) Tag(name []byte, end, selfClosing bool) {
	if s.kept >= MaxText {
		return
	}
	a := atom.Lookup(name)
	if blocks(a) {
		s.flush()
	}
	if selfClosing {
		return
	}
	delta := 1
	if end {
		delta = -1
	}
	switch {
	case skipped(a):
		s.skip = max(0, s.skip+delta)
	case a == atom.A:
		s.inLink = max(0, s.inLink+delta)
	}
}

// Full says whether the Signer has MaxText bytes of main text: it takes
// nothing more.
func (s *Signer) Full() bool { return s.kept >= MaxText }

// Sum ends the page and returns its signature.
func (s *Signer) Sum() uint64 {
	s.flush()
	s.spill()
	if s.words == 1 {
		return s.first // the one feature, of the one word
	}
	var sig uint64
	for i, c := range s.ones {
		if 2*c > s.features {
			sig |= 1 << uint(i)
		}
	}
	return sig
}

// fields returns the bytes in the fields of t and their number, as
// strings.Fields splits it.
func fields(t []byte) (n, f int) {
	in := false
	for i := 0; i < len(t); {
		c := t[i]
		var space bool
		size := 1
		if c < utf8.RuneSelf {
			space = asciiSpace[c]
		} else {
			var r rune
			r, size = utf8.DecodeRune(t[i:])
			space = unicode.IsSpace(r)
		}
		if !space {
			n += size
			if !in {
				f++
			}
		}
		in = !space
		i += size
	}
	return n, f
}

var asciiSpace = [256]bool{'\t': true, '\n': true, '\v': true, '\f': true, '\r': true, ' ': true}

// flush ends a block: it is main text unless most of it is link text.
func (s *Signer) flush() {
	if s.blockFields > 0 {
		text := s.blockBytes + s.blockFields - 1
		linked := 0
		if s.linkFields > 0 {
			linked = s.linkBytes + s.linkFields - 1
		}
		if float64(linked) <= maxLinkDensity*float64(text) {
			s.words1(s.block)
			s.kept += text + 1
		}
	}
	s.block = s.block[:0]
	s.blockBytes, s.blockFields, s.linkBytes, s.linkFields = 0, 0, 0, 0
}

// words1 hashes the words of a kept block as Words splits them.
func (s *Signer) words1(t []byte) {
	start := -1
	for i := 0; i <= len(t); {
		sep, size := true, 1
		if i < len(t) {
			r := rune(t[i])
			if r >= utf8.RuneSelf {
				r, size = utf8.DecodeRune(t[i:])
				if r == utf8.RuneError && size == 1 {
					r = -1 // invalid: a separator, as strings.FieldsFunc sees U+FFFD
				}
			}
			if r >= 0 && r < utf8.RuneSelf {
				sep = asciiSeparator[r] // isSeparator's ASCII case, in line
			} else {
				sep = r < 0 || isSeparator(r)
			}
		}
		switch {
		case !sep && start < 0:
			start = i
		case sep && start >= 0:
			s.word1(t[start:i])
			start = -1
		}
		i += size
	}
}

// word1 takes one field: trimmed of apostrophes, without digits, not a
// calendar word, it is hashed.
func (s *Signer) word1(w []byte) {
	for len(w) > 0 {
		if w[0] == '\'' {
			w = w[1:]
		} else if bytes.HasPrefix(w, apostrophe) {
			w = w[len(apostrophe):]
		} else {
			break
		}
	}
	for len(w) > 0 {
		if w[len(w)-1] == '\'' {
			w = w[:len(w)-1]
		} else if bytes.HasSuffix(w, apostrophe) {
			w = w[:len(w)-len(apostrophe)]
		} else {
			break
		}
	}
	if len(w) == 0 {
		return
	}
	lw := s.word[:0]
	for i := 0; i < len(w); {
		c := w[i]
		if c < utf8.RuneSelf {
			if c >= '0' && c <= '9' {
				return
			}
			if c >= 'A' && c <= 'Z' {
				c += 'a' - 'A'
			}
			lw = append(lw, c)
			i++
			continue
		}
		r, size := utf8.DecodeRune(w[i:])
		if unicode.IsDigit(r) {
			return
		}
		lw = utf8.AppendRune(lw, lower(r))
		i += size
	}
	s.word = lw
	if len(lw) <= maxCalendar && calendarSeen[calendarSlot(lw)] && calendar[string(lw)] {
		return
	}
	const offset, prime = 14695981039346656037, 1099511628211
	h := uint64(offset)
	p := s.prev
	for _, c := range lw {
		h = (h ^ uint64(c)) * prime
		p = (p ^ uint64(c)) * prime
	}
	h *= prime // the zero byte after the word
	if s.words == 0 {
		s.first = h
	} else {
		s.add(p)
	}
	s.prev = h
	s.words++
}

var apostrophe = []byte("’")

// add counts a feature's bits: bit 8k+j of f adds one to byte k of
// lanes[j], eight additions a feature whatever its bits.
func (s *Signer) add(f uint64) {
	s.features++
	for j := range s.lanes {
		s.lanes[j] += (f >> uint(j)) & 0x0101010101010101
	}
	if s.inLanes++; s.inLanes == 255 {
		s.spill()
	}
}

// spill adds the lanes' counts to ones.
func (s *Signer) spill() {
	for j, l := range s.lanes {
		for k := 0; k < 8; k++ {
			s.ones[8*k+j] += int32(l >> uint(8*k) & 0xff)
		}
	}
	s.lanes, s.inLanes = [8]uint64{}, 0
}

// Distance is the number of bits in which two signatures differ.
func Distance(a, b uint64) int { return bits.OnesCount64(a ^ b) }

// Changed reports whether two signatures differ by more than threshold
// bits (DefaultThreshold when threshold < 0).
func Changed(a, b uint64, threshold int) bool {
	if threshold < 0 {
		threshold = DefaultThreshold
	}
	return Distance(a, b) > threshold
}

// Hex writes a signature as 16 lower-case hex digits, the form of the
// record field "text_simhash".
func Hex(s uint64) string {
	h := strconv.FormatUint(s, 16)
	return strings.Repeat("0", 16-len(h)) + h
}

// ParseHex reads a signature written by Hex.
func ParseHex(h string) (uint64, error) {
	return strconv.ParseUint(h, 16, 64)
}
