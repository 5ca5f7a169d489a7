// Package urlfeat extracts the "sekitei" (rock garden) URL features of the
// Technosphere crawling course: the number of path segments, query parameter
// names and name=value pairs, and for every path segment its name, whether it
// is all digits or letters-digits-letters, its extension and its length.
//
// The rules, for a URL's path and query (indexes from 0):
//
//	segments:<number of path segments>
//	param_name:<name>                       each query parameter
//	param:<name=value>                      each query parameter, as written
//	segment_name_<i>:<segment>
//	segment_[0-9]_<i>:1                     all ASCII digits
//	segment_substr[0-9]_<i>:1               ^[^\d]+\d+[^\d]+$
//	segment_ext_<i>:<extension>             text after the last dot, if any
//	segment_ext_substr[0-9]_<i>:<extension> both of the two above
//	segment_len_<i>:<length in bytes>
//
// With WholeURL set, four features of the whole URL follow (the lecture's;
// off by default so that the homework's feature list stays exact):
//
//	url_len:<length of the URL in bytes, as given>
//	params:<number of distinct query parameter names>
//	param_names:<the distinct names, sorted, joined by ','>   only with a query
//	query_empty:1                           no query parameters at all
//
// param_names is sorted so that "?a=1&b=2" and "?b=2&a=1" agree: the order of
// parameters does not matter to a site.
//
// The path is percent-decoded as bytes (upper- or lower-case escapes; an
// invalid escape such as "%zz" is kept as written) and then split on '/';
// empty segments are dropped, so "//a/b/" has two segments. The query is
// split on '&' first and each name and value decoded afterwards, with '+' as
// a space, so an encoded '&' or '=' stays data. A parameter without '=' gives
// param:<name>, one with an empty value param:<name>=. The fragment is
// ignored. Lengths count decoded bytes. In feature text, bytes that are not
// valid UTF-8 and control characters are written back as %XX, so every
// feature is printable and valid UTF-8. A feature occurs at most once per URL
// (a repeated parameter counts once).
//
// Extraction is allocation-free after warm-up: an Extractor reuses its
// buffers, and the features it returns are valid until its next call.
package urlfeat

import (
	"bytes"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/sekitei/crawlkit/pkg/urlx"
)

// An Extractor computes features. It is not safe for concurrent use; use
// one per goroutine.
type Extractor struct {
	// WholeURL adds the whole-URL features (url_len, params, param_names,
	// query_empty) after the homework's.
	WholeURL bool

	buf   []byte   // the features' text, back to back
	ends  []int    // end offset of each feature in buf
	path  []byte   // scratch: the decoded path
	tmp   []byte   // scratch: a decoded query parameter
	names []string // scratch: parameter names for param_names
	host  string
}

// Features returns the features of the last Extract call, valid until the
// next call.
func (e *Extractor) Features() Features { return Features{buf: e.buf, ends: e.ends} }

// Host returns the normalised host[:port] of the last URL extracted.
func (e *Extractor) Host() string { return e.host }

// Features is a list of features sharing one buffer.
type Features struct {
	buf  []byte
	ends []int
}

// Len returns the number of features.
func (f Features) Len() int { return len(f.ends) }

// At returns feature i; the slice must not be modified.
func (f Features) At(i int) []byte {
	start := 0
	if i > 0 {
		start = f.ends[i-1]
	}
	return f.buf[start:f.ends[i]]
}

// Strings returns the features as new strings.
func (f Features) Strings() []string {
	out := make([]string, f.Len())
	for i := range out {
		out[i] = string(f.At(i))
	}
	return out
}

// Extract computes the features of an absolute http(s) URL. It returns an
// error for a relative URL, another scheme or a URL without host.
func (e *Extractor) Extract(rawURL string) (Features, error) {
	e.buf, e.ends = e.buf[:0], e.ends[:0]
	p, err := urlx.Split(rawURL)
	if err != nil {
		return Features{}, err
	}
	e.host = urlx.NormalizeHost(p.Scheme, p.Host)
	e.path = decode(e.path[:0], p.Path, false)

	// 1. segments:<n>
	n := 0
	forEachSegment(e.path, func([]byte) { n++ })
	e.buf = append(e.buf, "segments:"...)
	e.buf = appendInt(e.buf, n)
	e.end()

	// 2, 3. param_name:<name>, param:<name=value>
	if p.RawQuery != "" {
		e.addParams(p.RawQuery)
	}

	// 4. per segment
	i := 0
	forEachSegment(e.path, func(seg []byte) {
		e.addSegment(i, seg)
		i++
	})
	if e.WholeURL {
		e.addWholeURL(rawURL)
	}
	return e.Features(), nil
}

// addWholeURL appends the whole-URL features; see the package doc.
func (e *Extractor) addWholeURL(rawURL string) {
	e.buf = append(e.buf, "url_len:"...)
	e.buf = strconv.AppendInt(e.buf, int64(len(rawURL)), 10)
	e.end()
	// The distinct names, as param_name gives them, sorted.
	e.names = e.names[:0]
	f := e.Features()
	for j := 0; j < f.Len(); j++ {
		if name, ok := bytes.CutPrefix(f.At(j), []byte("param_name:")); ok {
			e.names = append(e.names, string(name))
		}
	}
	sort.Strings(e.names)
	e.buf = append(e.buf, "params:"...)
	e.buf = strconv.AppendInt(e.buf, int64(len(e.names)), 10)
	e.end()
	if len(e.names) == 0 {
		e.buf = append(e.buf, "query_empty:1"...)
		e.end()
		return
	}
	e.buf = append(e.buf, "param_names:"...)
	for j, n := range e.names {
		if j > 0 {
			e.buf = append(e.buf, ',')
		}
		e.buf = append(e.buf, n...)
	}
	e.end()
}

func (e *Extractor) end() { e.ends = append(e.ends, len(e.buf)) }

// dropIfRepeated removes the last feature if it already occurs at or after
// index from; it keeps features unique per URL.
func (e *Extractor) dropIfRepeated(from int) {
	last := len(e.ends) - 1
	f := e.Features()
	cur := f.At(last)
	for j := from; j < last; j++ {
		if string(f.At(j)) == string(cur) {
			e.buf = e.buf[:len(e.buf)-len(cur)]
			e.ends = e.ends[:last]
			return
		}
	}
}

func (e *Extractor) addParams(query string) {
	firstName := len(e.ends)
	// Names first, then name=value pairs, as the feature list is ordered.
	eachParam(query, func(pair string) {
		name := pair
		for k := 0; k < len(pair); k++ {
			if pair[k] == '=' {
				name = pair[:k]
				break
			}
		}
		if name == "" {
			return
		}
		e.buf = append(e.buf, "param_name:"...)
		e.tmp = decode(e.tmp[:0], name, true)
		e.buf = appendClean(e.buf, e.tmp)
		e.end()
		e.dropIfRepeated(firstName)
	})
	firstPair := len(e.ends)
	eachParam(query, func(pair string) {
		if pair == "" || pair[0] == '=' {
			return
		}
		e.buf = append(e.buf, "param:"...)
		e.tmp = decode(e.tmp[:0], pair, true)
		e.buf = appendClean(e.buf, e.tmp)
		e.end()
		e.dropIfRepeated(firstPair)
	})
}

func eachParam(query string, fn func(string)) {
	for len(query) > 0 {
		k := 0
		for k < len(query) && query[k] != '&' {
			k++
		}
		if k > 0 {
			fn(query[:k])
		}
		if k == len(query) {
			return
		}
		query = query[k+1:]
	}
}

func (e *Extractor) addSegment(i int, seg []byte) {
	idx := func(prefix string) {
		e.buf = append(e.buf, prefix...)
		e.buf = appendInt(e.buf, i)
		e.buf = append(e.buf, ':')
	}
	idx("segment_name_")
	e.buf = appendClean(e.buf, seg)
	e.end()

	if allDigits(seg) {
		idx("segment_[0-9]_")
		e.buf = append(e.buf, '1')
		e.end()
	}
	substr := lettersDigitsLetters(seg)
	if substr {
		idx("segment_substr[0-9]_")
		e.buf = append(e.buf, '1')
		e.end()
	}
	ext := extension(seg)
	if ext != nil {
		idx("segment_ext_")
		e.buf = appendClean(e.buf, ext)
		e.end()
		if substr {
			idx("segment_ext_substr[0-9]_")
			e.buf = appendClean(e.buf, ext)
			e.end()
		}
	}
	idx("segment_len_")
	e.buf = appendInt(e.buf, len(seg))
	e.end()
}

// appendInt is strconv.AppendInt in base 10, with the one and two digit
// numbers of segment indexes and lengths done inline.
func appendInt(b []byte, v int) []byte {
	switch {
	case v >= 0 && v < 10:
		return append(b, byte('0'+v))
	case v >= 10 && v < 100:
		return append(b, byte('0'+v/10), byte('0'+v%10))
	}
	return strconv.AppendInt(b, int64(v), 10)
}

func forEachSegment(path []byte, fn func([]byte)) {
	start := 0
	for k := 0; k <= len(path); k++ {
		if k == len(path) || path[k] == '/' {
			if k > start {
				fn(path[start:k])
			}
			start = k + 1
		}
	}
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func allDigits(s []byte) bool {
	if len(s) == 0 {
		return false
	}
	for _, c := range s {
		if !isDigit(c) {
			return false
		}
	}
	return true
}

// lettersDigitsLetters reports whether s matches ^[^\d]+\d+[^\d]+$: one run of
// digits with at least one non-digit on each side.
func lettersDigitsLetters(s []byte) bool {
	if len(s) < 3 || isDigit(s[0]) || isDigit(s[len(s)-1]) {
		return false
	}
	runs := 0
	for k := 0; k < len(s); k++ {
		if isDigit(s[k]) && !isDigit(s[k-1]) { // s[0] is not a digit, so k >= 1
			runs++
		}
	}
	return runs == 1
}

// extension returns the text after the last dot, or nil if there is no dot
// or nothing follows it.
func extension(s []byte) []byte {
	for k := len(s) - 1; k >= 0; k-- {
		if s[k] == '.' {
			if k == len(s)-1 {
				return nil
			}
			return s[k+1:]
		}
	}
	return nil
}

func unhex(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// decode appends the percent-decoding of s to dst. Invalid escapes are kept as
// written. With plus, '+' decodes to a space (form encoding of queries).
func decode(dst []byte, s string, plus bool) []byte {
	// Most paths and parameters have nothing to decode: one copy.
	if strings.IndexByte(s, '%') < 0 && (!plus || strings.IndexByte(s, '+') < 0) {
		return append(dst, s...)
	}
	// The decoding is never longer than s: written in place, by index.
	n := len(dst)
	dst = slices.Grow(dst, len(s))[:n+len(s)]
	out := dst[n:]
	w := 0
	for k := 0; k < len(s); k++ {
		c := s[k]
		if c == '%' && k+2 < len(s) {
			hi, ok1 := unhex(s[k+1])
			lo, ok2 := unhex(s[k+2])
			if ok1 && ok2 {
				out[w] = hi<<4 | lo
				w++
				k += 2
				continue
			}
		} else if c == '+' && plus {
			c = ' '
		}
		out[w] = c
		w++
	}
	return dst[:n+w]
}

// appendClean appends s, writing bytes that are not valid UTF-8 and control
// characters as %XX so that feature text is printable, valid UTF-8.
func appendClean(dst, s []byte) []byte {
	const hex = "0123456789ABCDEF"
	// Nearly always the whole text is printable ASCII or valid UTF-8
	// (a decoded path in another script): one copy.
	ascii := true
	k := 0
	for ; k < len(s); k++ {
		c := s[k]
		if c < 0x20 || c == 0x7f {
			break
		}
		ascii = ascii && c < utf8.RuneSelf
	}
	if k == len(s) && (ascii || utf8.Valid(s)) {
		return append(dst, s...)
	}
	for k := 0; k < len(s); {
		c := s[k]
		if c >= 0x20 && c < 0x7f {
			// A run of printable ASCII, nearly always the whole text, goes
			// in one copy.
			run := k + 1
			for run < len(s) && s[run] >= 0x20 && s[run] < 0x7f {
				run++
			}
			dst = append(dst, s[k:run]...)
			k = run
			continue
		}
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRune(s[k:])
			if r != utf8.RuneError || size > 1 {
				dst = append(dst, s[k:k+size]...)
				k += size
				continue
			}
		}
		dst = append(dst, '%', hex[c>>4], hex[c&15])
		k++
	}
	return dst
}
