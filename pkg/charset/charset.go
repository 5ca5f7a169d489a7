// Package charset makes the one charset decision every tool that reads a
// page shares (the fetcher's parser, the index over WARC payloads), and
// decodes the page to UTF-8.
//
// The order is the one of the HTML standard's encoding sniffing: a byte
// order mark, the charset of the HTTP Content-Type, a <meta charset> or
// <meta http-equiv="Content-Type"> in the first 1024 bytes, then a guess
// from the bytes. Names are resolved with golang.org/x/net/html/charset
// (the WHATWG labels) and decoded with golang.org/x/text.
//
// Two things are ours, because x/net/html/charset guesses only UTF-8 or
// windows-1252: the guess tells windows-1251 and KOI8-R (still common on
// Russian sites) from windows-1252 by how high bytes cluster into words and
// which Russian letters they would be; and a declaration that lies is
// caught: UTF-8 declared on bytes that are not UTF-8, or a single-byte
// charset declared on bytes that are valid multi-byte UTF-8, is replaced by
// the guess, with Source "sniffed".
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
	head := body
	if len(head) > 1024 {
		head = head[:1024]
	}
	if d, ok := declared(metaCharset(head), SourceMeta, body); ok {
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
		return Sniff(body), true
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

// metaCharset finds the charset of a <meta charset> or <meta
// http-equiv="Content-Type" content="...; charset=..."> with the x/net/html
// tokenizer.
func metaCharset(head []byte) string {
	z := html.NewTokenizer(bytes.NewReader(head))
	for {
		switch z.Next() {
		case html.ErrorToken:
			return ""
		case html.StartTagToken, html.SelfClosingTagToken:
			name, hasAttr := z.TagName()
			if string(name) != "meta" || !hasAttr {
				continue
			}
			var cs, content string
			var httpEquiv bool
			for {
				k, v, more := z.TagAttr()
				switch string(k) {
				case "charset":
					cs = string(v)
				case "content":
					content = string(v)
				case "http-equiv":
					httpEquiv = strings.EqualFold(string(v), "content-type")
				}
				if !more {
					break
				}
			}
			if cs != "" {
				return cs
			}
			if httpEquiv && content != "" {
				if _, params, err := mime.ParseMediaType(content); err == nil && params["charset"] != "" {
					return params["charset"]
				}
				if i := strings.Index(strings.ToLower(content), "charset="); i >= 0 {
					return strings.Trim(content[i+len("charset="):], `"'; `)
				}
			}
		}
	}
}

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
