// Package charset makes the one charset decision every tool that reads a
// page shares (the fetcher's parser, the index over WARC payloads), and
// decodes the page to UTF-8.
//
// The order is the one of the HTML standard's encoding sniffing: a byte
// order mark, the charset of the HTTP Content-Type, the Standard's prescan
// of the first 1024 bytes for a <meta charset> or <meta
// http-equiv="Content-Type"> (comments skipped, a meta naming no known
// encoding passed over), then, as the parser changes the encoding when it
// meets one later, the first such meta in the whole document (outside
// comments, scripts and styles, by the x/net/html tokenizer), then a guess
// from the bytes. Names are resolved with golang.org/x/net/html/charset
// (the WHATWG labels) and decoded with golang.org/x/text.
// TestHTML5libEncoding runs html5lib-tests' encoding cases.
//
// Two things are ours, because x/net/html/charset guesses only UTF-8 or
// windows-1252: the guess tells windows-1251 and KOI8-R (still common on
// Russian sites) from windows-1252 by how high bytes cluster into words and
// which Russian letters they would be; and a declaration that lies is
// caught: UTF-8 declared on Cyrillic single-byte text (more invalid UTF-8
// than valid), or a single-byte charset declared on bytes that are valid
// multi-byte UTF-8, is replaced by the guess, with Source "sniffed". Other
// invalid bytes in a page declared UTF-8 become U+FFFD.
package charset

import (
	"bytes"
	"mime"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/html"
	htmlcharset "golang.org/x/net/html/charset"
	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
)

// Sources of a Decision.
const (
	SourceBOM     = "bom"
	SourceHeader  = "header"
	SourceMeta    = "meta"
	SourceSniffed = "sniffed"
)

// A Decision is the charset of a page and how it was found.
type Decision struct {
	Name   string // WHATWG name: "utf-8", "windows-1251", "koi8-r", "windows-1252"...
	Source string // SourceBOM, SourceHeader, SourceMeta or SourceSniffed
	enc    encoding.Encoding
}

// Encoding returns the x/text encoding of the decision (nil for UTF-8).
func (d Decision) Encoding() encoding.Encoding { return d.enc }

// sniffLimit bounds the bytes looked at by the guess.
const sniffLimit = 64 << 10

// Decide returns the charset of an HTML or text body served with the
// Content-Type header contentType ("" if none).
func Decide(body []byte, contentType string) Decision {
	for _, b := range boms {
		if bytes.HasPrefix(body, b.bom) {
			return lookup(b.name, SourceBOM)
		}
	}
	if _, params, err := mime.ParseMediaType(contentType); err == nil {
		if d, ok := declared(params["charset"], SourceHeader, body); ok {
			return d
		}
	}
	if d, ok := declared(metaName(body), SourceMeta, body); ok {
		return d
	}
	return Sniff(body)
}

// Decode converts body to UTF-8 by Decide; the byte order mark is dropped
// and invalid sequences become U+FFFD.
func Decode(body []byte, contentType string) ([]byte, Decision) {
	d := Decide(body, contentType)
	return d.Decode(body), d
}

// Decode converts body from d's charset to UTF-8.
func (d Decision) Decode(body []byte) []byte {
	for _, b := range boms {
		if bytes.HasPrefix(body, b.bom) && b.name == d.Name {
			body = body[len(b.bom):]
			break
		}
	}
	if d.enc == nil {
		if utf8.Valid(body) {
			return body
		}
		return bytes.ToValidUTF8(body, []byte("\uFFFD"))
	}
	out, err := d.enc.NewDecoder().Bytes(body)
	if err != nil {
		return bytes.ToValidUTF8(body, []byte("\uFFFD"))
	}
	return out
}

var boms = []struct {
	bom  []byte
	name string
}{
	{[]byte{0xEF, 0xBB, 0xBF}, "utf-8"},
	{[]byte{0xFE, 0xFF}, "utf-16be"},
	{[]byte{0xFF, 0xFE}, "utf-16le"},
}

func lookup(label, source string) Decision {
	e, name := htmlcharset.Lookup(label)
	if e == nil {
		return Decision{}
	}
	if name == "utf-8" {
		e = nil
	}
	return Decision{Name: name, Source: source, enc: e}
}

// declared checks a declared charset label against the bytes.
func declared(label, source string, body []byte) (Decision, bool) {
	label = strings.TrimSpace(label)
	if label == "" {
		return Decision{}, false
	}
	d := lookup(label, source)
	if d.Name == "" {
		return Decision{}, false // unknown name: the next source decides
	}
	sample := clipUTF8(body, sniffLimit)
	switch {
	case d.Name == "utf-8" && !utf8.Valid(sample):
		// A UTF-8 page with a few bad bytes is UTF-8, read with U+FFFD for
		// them, as the HTML standard reads a declared encoding. Only a page
		// whose high bytes are whole words of Cyrillic in a single-byte
		// charset, with less valid UTF-8 in it than invalid, is taken for
		// the lie it is.
		if g := Sniff(body); (g.Name == "windows-1251" || g.Name == "koi8-r") && mostlyInvalidUTF8(sample) {
			return g, true
		}
		return d, true
	case singleByte(d.Name) && hasMultibyte(sample) && utf8.Valid(sample):
		return Decision{Name: "utf-8", Source: SourceSniffed}, true
	case strings.HasPrefix(d.Name, "utf-16"):
		// A meta or header saying UTF-16 on bytes without a BOM is what the
		// HTML standard reads as UTF-8 (x/net does the same).
		if source == SourceMeta {
			return Decision{Name: "utf-8", Source: source}, true
		}
	}
	return d, true
}

// mostlyInvalidUTF8 reports whether b holds more invalid UTF-8 bytes than
// valid multi-byte sequences.
func mostlyInvalidUTF8(b []byte) bool {
	valid, invalid := 0, 0
	for len(b) > 0 {
		if b[0] < utf8.RuneSelf {
			b = b[1:]
			continue
		}
		r, n := utf8.DecodeRune(b)
		if r == utf8.RuneError && n == 1 {
			invalid++
		} else {
			valid++
		}
		b = b[n:]
	}
	return invalid > valid
}

func singleByte(name string) bool {
	return strings.HasPrefix(name, "windows-12") || strings.HasPrefix(name, "iso-8859") ||
		strings.HasPrefix(name, "koi8") || name == "ibm866" || name == "macintosh" || name == "x-mac-cyrillic"
}

// clipUTF8 cuts b to at most n bytes without splitting a UTF-8 sequence.
func clipUTF8(b []byte, n int) []byte {
	if len(b) <= n {
		return b
	}
	b = b[:n]
	for i := 0; i < 3 && len(b) > 0; i++ {
		r, size := utf8.DecodeLastRune(b)
		if r != utf8.RuneError || size != 1 {
			break
		}
		b = b[:len(b)-1]
	}
	return b
}

func hasMultibyte(b []byte) bool {
	for _, c := range b {
		if c >= 0x80 {
			return true
		}
	}
	return false
}

// metaName is the encoding a <meta> declares: the prescan's over the first
// 1024 bytes, else the first one the parser would meet in the document (a
// meta after long comments or inline scripts, where the parser changes the
// encoding).
func metaName(body []byte) string {
	head := body
	if len(head) > prescanLimit {
		head = head[:prescanLimit]
	}
	if name := prescan(head); name != "" {
		return name
	}
	return documentMeta(body)
}

// prescanLimit is how far the prescan looks, as the Standard suggests.
const prescanLimit = 1024

// prescan is the HTML standard's "prescan a byte stream to determine its
// encoding": it returns the WHATWG name of the first <meta> declaring a
// known encoding in b, "" if none. It skips comments and the attributes of
// other tags but knows no raw-text elements, so a meta in a script within
// the bytes counts, as in browsers; a meta naming an unknown encoding is
// passed over for the next one.
func prescan(b []byte) string {
	for i := 0; i < len(b); i++ {
		if b[i] != '<' {
			continue
		}
		rest := b[i:]
		switch {
		case bytes.HasPrefix(rest, []byte("<!--")):
			// Up to the first "-->", whose dashes may be those of "<!--".
			k := bytes.Index(b[i+2:], []byte("-->"))
			if k < 0 {
				return ""
			}
			i += 2 + k + 2
		case len(rest) > 5 && asciiEqualFold(rest[1:5], "meta") && (isSpace(rest[5]) || rest[5] == '/'):
			name, end, ok := prescanMeta(b, i+6)
			if !ok {
				return ""
			}
			if name != "" {
				return name
			}
			i = end
		case len(rest) > 1 && (isLetter(rest[1]) || rest[1] == '/' && len(rest) > 2 && isLetter(rest[2])):
			k := i + 1
			for k < len(b) && !isSpace(b[k]) && b[k] != '>' {
				k++
			}
			for {
				_, _, next, ok, more := getAttr(b, k)
				if !ok {
					return ""
				}
				k = next
				if !more {
					break
				}
			}
			i = k
		case len(rest) > 1 && (rest[1] == '!' || rest[1] == '/' || rest[1] == '?'):
			k := bytes.IndexByte(b[i+1:], '>')
			if k < 0 {
				return ""
			}
			i += 1 + k
		}
	}
	return ""
}

// prescanMeta reads the attributes of a meta from i and returns the name of
// the encoding it declares ("" if none) and where it ends; ok is false when
// the bytes end first.
func prescanMeta(b []byte, i int) (name string, end int, ok bool) {
	seen := map[string]bool{}
	gotPragma, needPragma, charset := false, 0, "" // needPragma: 0 unset, 1 yes, 2 no
	for {
		key, val, next, ok, more := getAttr(b, i)
		if !ok {
			return "", 0, false
		}
		i = next
		if !more {
			break
		}
		if seen[key] {
			continue
		}
		seen[key] = true
		switch key {
		case "http-equiv":
			gotPragma = gotPragma || val == "content-type"
		case "content":
			if charset == "" && needPragma == 0 {
				if n := known(fromContent(val)); n != "" {
					charset, needPragma = n, 1
				}
			}
		case "charset":
			charset, needPragma = known(val), 2
			if charset == "" {
				charset = "-" // failure: no later content attribute counts
			}
		}
	}
	if needPragma == 0 || needPragma == 1 && !gotPragma || charset == "-" {
		return "", i, true
	}
	return charset, i, true
}

// getAttr is the prescan's "get an attribute" at i: the lower-cased name and
// value and the offset after them; more is false at the tag's '>' (which
// next then points at), ok false when the bytes end first.
func getAttr(b []byte, i int) (key, val string, next int, ok, more bool) {
	for i < len(b) && (isSpace(b[i]) || b[i] == '/') {
		i++
	}
	if i >= len(b) {
		return "", "", i, false, false
	}
	if b[i] == '>' {
		return "", "", i, true, false
	}
	var k, v []byte
	for ; ; i++ {
		if i >= len(b) {
			return "", "", i, false, false
		}
		c := b[i]
		if c == '=' && len(k) > 0 {
			i++
			goto value
		}
		if isSpace(c) {
			break
		}
		if c == '/' || c == '>' {
			return string(k), "", i, true, true
		}
		k = append(k, lower(c))
	}
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	if i >= len(b) {
		return "", "", i, false, false
	}
	if b[i] != '=' {
		return string(k), "", i, true, true
	}
	i++
value:
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	if i >= len(b) {
		return "", "", i, false, false
	}
	if q := b[i]; q == '"' || q == '\'' {
		for i++; i < len(b); i++ {
			if b[i] == q {
				return string(k), string(v), i + 1, true, true
			}
			v = append(v, lower(b[i]))
		}
		return "", "", i, false, false
	}
	if b[i] == '>' {
		return string(k), "", i, true, true
	}
	for ; i < len(b); i++ {
		if isSpace(b[i]) || b[i] == '>' {
			return string(k), string(v), i, true, true
		}
		v = append(v, lower(b[i]))
	}
	return "", "", i, false, false
}

// fromContent is the Standard's "extracting a character encoding from a
// meta element": the label after "charset=" in a content attribute.
func fromContent(s string) string {
	for {
		i := strings.Index(strings.ToLower(s), "charset")
		if i < 0 {
			return ""
		}
		s = strings.TrimLeft(s[i+len("charset"):], "\t\n\f\r ")
		if s == "" || s[0] != '=' {
			continue
		}
		s = strings.TrimLeft(s[1:], "\t\n\f\r ")
		switch {
		case s == "":
			return ""
		case s[0] == '"' || s[0] == '\'':
			if j := strings.IndexByte(s[1:], s[0]); j >= 0 {
				return s[1 : 1+j]
			}
			return ""
		}
		if j := strings.IndexAny(s, "\t\n\f\r ;"); j >= 0 {
			return s[:j]
		}
		return s
	}
}

// known returns the WHATWG name of a label, "" if it names no encoding;
// a meta saying UTF-16 means UTF-8 and x-user-defined windows-1252, as the
// Standard says.
func known(label string) string {
	e, name := htmlcharset.Lookup(label)
	switch {
	case e == nil || name == "replacement":
		return ""
	case strings.HasPrefix(name, "utf-16"):
		return "utf-8"
	case name == "x-user-defined":
		return "windows-1252"
	}
	return name
}

// documentMeta is the parser's "change the encoding": the first <meta> in
// the whole document (outside comments and raw-text elements such as
// script and style, as the tokenizer reads them) with a charset naming a
// known encoding, or http-equiv=Content-Type and a content naming one.
func documentMeta(body []byte) string {
	if !containsFold(body, "charset") {
		return ""
	}
	z := html.NewTokenizer(bytes.NewReader(body))
	for {
		switch z.Next() {
		case html.ErrorToken:
			return ""
		case html.StartTagToken, html.SelfClosingTagToken:
			name, hasAttr := z.TagName()
			if string(name) != "meta" || !hasAttr {
				continue
			}
			var cs, content, equiv string
			var gotCS, gotContent, gotEquiv bool
			for hasAttr {
				var k, v []byte
				k, v, hasAttr = z.TagAttr()
				switch string(k) {
				case "charset":
					if !gotCS {
						cs, gotCS = string(v), true
					}
				case "content":
					if !gotContent {
						content, gotContent = string(v), true
					}
				case "http-equiv":
					if !gotEquiv {
						equiv, gotEquiv = string(v), true
					}
				}
			}
			if n := known(cs); gotCS && n != "" {
				return n
			}
			if strings.EqualFold(equiv, "content-type") && gotContent {
				if n := known(fromContent(content)); n != "" {
					return n
				}
			}
		}
	}
}

func containsFold(b []byte, s string) bool {
	for i := 0; i+len(s) <= len(b); i++ {
		j := bytes.IndexAny(b[i:], s[:1]+strings.ToUpper(s[:1]))
		if j < 0 || i+j+len(s) > len(b) {
			return false
		}
		i += j
		if asciiEqualFold(b[i:i+len(s)], s) {
			return true
		}
	}
	return false
}

func asciiEqualFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range b {
		if lower(b[i]) != s[i] {
			return false
		}
	}
	return true
}

func lower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' }

// Sniff guesses the charset of undeclared bytes: UTF-8 if they are valid
// UTF-8, else windows-1251, KOI8-R or windows-1252.
//
// Cyrillic text is whole words of high bytes, Western text has accented
// letters here and there between ASCII ones: when most high bytes stand
// next to another high byte, the bytes are read as each Cyrillic charset
// and scored by the frequency of the Russian letters they give (lower case
// counts fully, upper case a third, since text is mostly lower case; in
// KOI8-R the two cases are where windows-1251 has them swapped).
func Sniff(body []byte) Decision {
	sample := clipUTF8(body, sniffLimit)
	if utf8.Valid(sample) {
		return Decision{Name: "utf-8", Source: SourceSniffed}
	}
	high, clustered := 0, 0
	for i, c := range sample {
		if c < 0x80 {
			continue
		}
		high++
		if i > 0 && sample[i-1] >= 0x80 || i+1 < len(sample) && sample[i+1] >= 0x80 {
			clustered++
		}
	}
	if high > 0 && 2*clustered >= high {
		best, bestScore := "", 0.0
		for _, c := range cyrillic {
			if s := score(sample, c.cm); s > bestScore {
				best, bestScore = c.name, s
			}
		}
		// A Cyrillic reading must give letters for most high bytes.
		if best != "" && bestScore >= 0.02*float64(high) {
			return lookup(best, SourceSniffed)
		}
	}
	return lookup("windows-1252", SourceSniffed)
}

var cyrillic = []struct {
	name string
	cm   *charmap.Charmap
}{
	{"windows-1251", charmap.Windows1251},
	{"koi8-r", charmap.KOI8R},
	{"ibm866", charmap.CodePage866},
}

// russian holds the frequency (per cent) of Russian letters in running
// text; Ukrainian and Belarusian letters get a small weight.
var russian = map[rune]float64{
	'о': 10.97, 'е': 8.45, 'а': 8.01, 'и': 7.35, 'н': 6.70, 'т': 6.26, 'с': 5.47, 'р': 4.73,
	'в': 4.54, 'л': 4.40, 'к': 3.49, 'м': 3.21, 'д': 2.98, 'п': 2.81, 'у': 2.62, 'я': 2.01,
	'ы': 1.90, 'ь': 1.74, 'г': 1.70, 'з': 1.65, 'б': 1.59, 'ч': 1.44, 'й': 1.21, 'х': 0.97,
	'ж': 0.94, 'ш': 0.73, 'ю': 0.64, 'ц': 0.48, 'щ': 0.36, 'э': 0.32, 'ф': 0.26, 'ъ': 0.04,
	'ё': 0.04, 'і': 1, 'ї': 0.5, 'є': 0.5, 'ґ': 0.1, 'ў': 0.5,
}

func score(sample []byte, cm *charmap.Charmap) float64 {
	s := 0.0
	for _, c := range sample {
		if c < 0x80 {
			continue
		}
		r := cm.DecodeByte(c)
		if w, ok := russian[r]; ok {
			s += w / 100
		} else if w, ok := russian[unicode.ToLower(r)]; ok {
			s += w / 300
		}
	}
	return s
}
