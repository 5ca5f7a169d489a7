package sekitei

import (
	"bytes"
	"strconv"
	"unicode"
	"unicode/utf8"

	"github.com/sekitei/crawlkit/pkg/urlfeat"
	"github.com/sekitei/crawlkit/pkg/urlx"
)

// Evidence computes the features the fetch classifier weighs: urlfeat's
// sekitei features plus generalisations of them that carry over to URLs
// never seen in training — the character-class shape of each path segment
// ("2013" → "9", "File:X1y.jpg" → "Aa:Aa9a.a"), the namespace before a
// colon ("Category:"), the words of each segment, log2 length buckets, the
// shape of the whole path (a URL template), the last segment's shape, a
// trailing slash and the number of query parameters. None of them names a
// site.
//
// An Evidence reuses its buffers; it is not safe for concurrent use.
type Evidence struct {
	ex     urlfeat.Extractor
	buf    []byte // the features' text, back to back
	ends   []int  // end offset of each feature in buf
	path   [][]byte
	tmpl   []byte
	hashes []uint64
}

// Extract returns the evidence features of rawURL as new strings, and the
// normalised host.
func (e *Evidence) Extract(rawURL string) ([]string, string, error) {
	if err := e.extract(rawURL); err != nil {
		return nil, "", err
	}
	out := make([]string, len(e.ends))
	start := 0
	for i, end := range e.ends {
		out[i] = string(e.buf[start:end])
		start = end
	}
	return out, e.ex.Host(), nil
}

// Hashes returns the FNV-1a hashes of the evidence features of rawURL,
// valid until the next call; it allocates nothing once warm.
func (e *Evidence) Hashes(rawURL string) ([]uint64, error) {
	if err := e.extract(rawURL); err != nil {
		return nil, err
	}
	e.hashes = e.hashes[:0]
	start := 0
	for _, end := range e.ends {
		e.hashes = append(e.hashes, hashBytes(e.buf[start:end]))
		start = end
	}
	return e.hashes, nil
}

// Host returns the normalised host of the last URL extracted.
func (e *Evidence) Host() string { return e.ex.Host() }

func (e *Evidence) end() { e.ends = append(e.ends, len(e.buf)) }

func (e *Evidence) add(prefix string, idx int, value []byte) {
	e.buf = append(e.buf, prefix...)
	if idx >= 0 {
		e.buf = strconv.AppendInt(e.buf, int64(idx), 10)
		e.buf = append(e.buf, ':')
	}
	e.buf = append(e.buf, value...)
	e.end()
}

func (e *Evidence) addInt(prefix string, idx, v int) {
	e.buf = append(e.buf, prefix...)
	if idx >= 0 {
		e.buf = strconv.AppendInt(e.buf, int64(idx), 10)
		e.buf = append(e.buf, ':')
	}
	e.buf = strconv.AppendInt(e.buf, int64(v), 10)
	e.end()
}

func (e *Evidence) extract(rawURL string) error {
	f, err := e.ex.Extract(rawURL)
	if err != nil {
		return err
	}
	p, _ := urlx.Split(rawURL) // cannot fail: Extract accepted it
	e.buf, e.ends, e.path = e.buf[:0], e.ends[:0], e.path[:0]
	nparams := 0
	for i := 0; i < f.Len(); i++ {
		b := f.At(i)
		e.buf = append(e.buf, b...)
		e.end()
		switch {
		case bytes.HasPrefix(b, []byte("segment_name_")):
			if k := bytes.IndexByte(b, ':'); k >= 0 {
				e.path = append(e.path, b[k+1:])
			}
		case bytes.HasPrefix(b, []byte("param_name:")):
			nparams++
		}
	}
	e.tmpl = e.tmpl[:0]
	for i, seg := range e.path {
		start := len(e.buf)
		e.add("shape_", i, nil)
		e.buf = appendShape(e.buf, seg)
		e.ends[len(e.ends)-1] = len(e.buf)
		e.tmpl = append(e.tmpl, '/')
		e.tmpl = append(e.tmpl, e.buf[start+len("shape_:")+len(strconv.Itoa(i)):]...)
		e.addInt("lenb_", i, log2(len(seg)))
		if k := bytes.IndexByte(seg, ':'); k > 0 && k <= 40 {
			e.add("ns_", i, seg[:k+1])
		}
		e.addWords(seg)
	}
	if n := len(e.path); n > 0 {
		last := e.path[n-1]
		e.add("last_shape:", -1, nil)
		e.buf = appendShape(e.buf, last)
		e.ends[len(e.ends)-1] = len(e.buf)
		e.addInt("last_lenb:", -1, log2(len(last)))
	}
	e.add("template:", -1, e.tmpl)
	trail := 0
	if len(p.Path) > 0 && p.Path[len(p.Path)-1] == '/' && len(e.path) > 0 {
		trail = 1
	}
	e.addInt("trail:", -1, trail)
	e.addInt("nparams:", -1, nparams)
	e.addInt("qlenb:", -1, log2(len(p.RawQuery)))
	return nil
}

// addWords adds a word:<w> feature for each word of a path segment
// (letters and digits, lower-cased, 2 bytes or more): the bag of words of a
// URL, which tells topics apart within one template.
func (e *Evidence) addWords(seg []byte) {
	start := -1
	for i := 0; i <= len(seg); {
		r, size := rune(' '), 1
		if i < len(seg) {
			r, size = utf8.DecodeRune(seg[i:])
		}
		if isWordRune(r) && i < len(seg) {
			if start < 0 {
				start = i
			}
		} else {
			if start >= 0 && i-start >= 2 {
				e.buf = append(e.buf, "word:"...)
				for _, c := range string(seg[start:i]) {
					e.buf = utf8.AppendRune(e.buf, toLower(c))
				}
				e.end()
			}
			start = -1
		}
		i += size
	}
}

func isWordRune(r rune) bool {
	if r < utf8.RuneSelf {
		return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
	}
	return isLetterFast(r) || unicode.IsDigit(r)
}

// isLetterFast is unicode.IsLetter with the Cyrillic and Latin-1 letters,
// the common case in URLs, answered without the table search.
func isLetterFast(r rune) bool {
	switch {
	case r >= 0x400 && r <= 0x4FF: // Cyrillic
		return r <= 0x481 || r >= 0x48A
	case r >= 0xC0 && r <= 0x24F: // Latin-1 letters and Latin Extended
		return r != 0xD7 && r != 0xF7
	}
	return unicode.IsLetter(r)
}

// toLower is unicode.ToLower with a fast path for ASCII and Cyrillic.
func toLower(r rune) rune {
	switch {
	case r >= 'A' && r <= 'Z':
		return r + 'a' - 'A'
	case r < utf8.RuneSelf:
		return r
	case r >= 0x410 && r <= 0x42F: // А-Я
		return r + 0x20
	case r >= 0x430 && r <= 0x44F: // а-я
		return r
	}
	return unicode.ToLower(r)
}

// shape maps a segment to its run-collapsed character classes: a lower-case
// letter, A upper-case, 9 digit, u any other letter (Cyrillic...), and
// punctuation kept as itself; "%" escapes left undecoded count as u.
func appendShape(out []byte, s []byte) []byte {
	n0 := len(out)
	var last byte
	for _, r := range string(s) {
		var c byte
		switch {
		case r >= 'a' && r <= 'z':
			c = 'a'
		case r >= 'A' && r <= 'Z':
			c = 'A'
		case r >= '0' && r <= '9':
			c = '9'
		case r >= utf8.RuneSelf && isLetterFast(r):
			c = 'u'
		case r < utf8.RuneSelf:
			c = byte(r)
		default:
			c = '*'
		}
		if c == last && (c == 'a' || c == 'A' || c == '9' || c == 'u' || c == '*') {
			continue
		}
		out = append(out, c)
		last = c
		if len(out)-n0 >= 48 {
			out = append(out, '~')
			break
		}
	}
	return out
}

func log2(n int) int {
	b := 0
	for n > 0 {
		b++
		n >>= 1
	}
	return b
}
