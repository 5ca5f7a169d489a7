package sekitei

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/sekitei/crawlkit/pkg/urlfeat"
	"github.com/sekitei/crawlkit/pkg/urlx"
)

// Evidence computes the features the fetch classifier weighs: urlfeat's
// sekitei features plus generalisations of them that carry over to URLs
// never seen in training — the character-class shape of each path segment
// ("2013" → "9", "File:X1y.jpg" → "Aa:Aa9a.a"), the namespace before a
// colon ("Category:"), log2 length buckets, the shape of the whole path
// (a URL template), the last segment's shape, a trailing slash and the
// number of query parameters. None of them names a site.
//
// An Evidence reuses its buffers; it is not safe for concurrent use.
type Evidence struct {
	ex    urlfeat.Extractor
	buf   []byte
	feats []string // valid until the next call
	path  []string // decoded path segments, from urlfeat
	tmpl  []byte
}

// Extract returns the evidence features of rawURL, valid until the next
// call, and the normalised host.
func (e *Evidence) Extract(rawURL string) ([]string, string, error) {
	f, err := e.ex.Extract(rawURL)
	if err != nil {
		return nil, "", err
	}
	p, _ := urlx.Split(rawURL) // cannot fail: Extract accepted it
	e.feats = e.feats[:0]
	e.path = e.path[:0]
	nparams := 0
	for i := 0; i < f.Len(); i++ {
		s := string(f.At(i))
		e.feats = append(e.feats, s)
		switch {
		case strings.HasPrefix(s, "segment_name_"):
			if k := strings.IndexByte(s, ':'); k >= 0 {
				e.path = append(e.path, s[k+1:])
			}
		case strings.HasPrefix(s, "param_name:"):
			nparams++
		}
	}
	e.tmpl = e.tmpl[:0]
	for i, seg := range e.path {
		idx := strconv.Itoa(i)
		sh := shape(seg)
		e.feats = append(e.feats, "shape_"+idx+":"+sh, "lenb_"+idx+":"+strconv.Itoa(log2(len(seg))))
		if ns := namespace(seg); ns != "" {
			e.feats = append(e.feats, "ns_"+idx+":"+ns)
		}
		e.tmpl = append(e.tmpl, '/')
		e.tmpl = append(e.tmpl, sh...)
		e.feats = appendWords(e.feats, seg)
	}
	if n := len(e.path); n > 0 {
		last := e.path[n-1]
		e.feats = append(e.feats, "last_shape:"+shape(last), "last_lenb:"+strconv.Itoa(log2(len(last))))
	}
	trail := "0"
	if strings.HasSuffix(p.Path, "/") && len(e.path) > 0 {
		trail = "1"
	}
	e.feats = append(e.feats,
		"template:"+string(e.tmpl),
		"trail:"+trail,
		"nparams:"+strconv.Itoa(nparams),
		"qlenb:"+strconv.Itoa(log2(len(p.RawQuery))),
	)
	return e.feats, e.ex.Host(), nil
}

// shape maps a segment to its run-collapsed character classes: a lower-case
// letter, A upper-case, 9 digit, u any other letter (Cyrillic...), and
// punctuation kept as itself; "%" escapes left undecoded count as u.
func shape(s string) string {
	var b [64]byte
	out := b[:0]
	var last byte
	for _, r := range s {
		var c byte
		switch {
		case r >= 'a' && r <= 'z':
			c = 'a'
		case r >= 'A' && r <= 'Z':
			c = 'A'
		case r >= '0' && r <= '9':
			c = '9'
		case r >= utf8.RuneSelf && unicode.IsLetter(r):
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
		if len(out) >= 48 {
			out = append(out, '~')
			break
		}
	}
	return string(out)
}

// namespace returns the text before the first colon of a segment, with the
// colon ("Category:"), the way wikis and many CMSs name their namespaces; ""
// if there is none within the first 40 bytes.
func namespace(s string) string {
	k := strings.IndexByte(s, ':')
	if k <= 0 || k > 40 {
		return ""
	}
	return s[:k+1]
}

func log2(n int) int {
	b := 0
	for n > 0 {
		b++
		n >>= 1
	}
	return b
}

// appendWords adds a word:<w> feature for each word of a path segment
// (letters and digits, lower-cased, 2 bytes or more): the bag of words of a
// URL, which tells topics apart within one template.
func appendWords(feats []string, seg string) []string {
	start := -1
	for i, r := range seg + " " {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 && i-start >= 2 {
			feats = append(feats, "word:"+strings.ToLower(seg[start:i]))
		}
		start = -1
	}
	return feats
}
