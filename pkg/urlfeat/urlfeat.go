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

	// buf holds the features as JSON strings, each followed by a comma:
	// "f0","f1",...,"fn", so that a list whose text needs no escape is its
	// JSON array in one copy (AppendJSON). ends[i] is where feature i's
	// text ends; it starts 3 bytes after the previous one's end (",").
	buf   []byte
	ends  []int
	esc   bool      // some feature holds '"' or '\\': JSON needs escapes
	path  []byte    // scratch: the decoded path
	tmp   []byte    // scratch: a decoded query parameter
	segs  []segment // scratch: the path's segments
	names []string  // scratch: parameter names for param_names
	host  string
}

// Features returns the features of the last Extract call, valid until the
// next call.
func (e *Extractor) Features() Features { return Features{buf: e.buf, ends: e.ends, esc: e.esc} }

// Host returns the normalised host[:port] of the last URL extracted.
func (e *Extractor) Host() string { return e.host }

// Features is a list of features sharing one buffer.
type Features struct {
	buf  []byte // see Extractor.buf
	ends []int
	esc  bool
}

// Len returns the number of features.
func (f Features) Len() int { return len(f.ends) }

// start returns where feature i's text starts in buf.
func (f Features) start(i int) int {
	if i == 0 {
		return 1
	}
	return f.ends[i-1] + 3
}

// At returns feature i; the slice must not be modified.
func (f Features) At(i int) []byte { return f.buf[f.start(i):f.ends[i]] }

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
	return e.extract(rawURL, false)
}

// extract is Extract; printable says the caller found rawURL to be
// printable ASCII (see urlx.SplitPrintable).
func (e *Extractor) extract(rawURL string, printable bool) (Features, error) {
	e.buf, e.ends, e.esc = e.buf[:0], e.ends[:0], false
	var p urlx.Parts
	var err error
	if printable {
		p, err = urlx.SplitPrintable(rawURL)
	} else {
		p, err = urlx.Split(rawURL)
	}
	if err != nil {
		return Features{}, err
	}
	e.host = urlx.NormalizeHost(p.Scheme, p.Host)
	e.path = decode(e.path[:0], p.Path, false)
	clean := e.scanPath()

	// 1. segments:<n>
	e.buf = append(e.buf, `"segments:`...)
	e.buf = appendInt(e.buf, len(e.segs))
	e.end()

	// 2, 3. param_name:<name>, param:<name=value>
	if p.RawQuery != "" {
		e.addParams(p.RawQuery)
	}

	// 4. per segment
	for i, s := range e.segs {
		e.addSegment(i, s, clean)
	}
	if e.WholeURL {
		e.addWholeURL(rawURL)
	}
	return e.Features(), nil
}

// A segment is a path segment with what its features need, found in the
// one pass over the path (scanPath).
type segment struct {
	start, end int  // in Extractor.path
	dot        int  // the last '.', or -1
	digitRuns  int  // runs of ASCII digits
	nonDigit   bool // a byte that is not an ASCII digit
}

// Byte classes for scanPath and appendText.
const (
	cDigit = 1 << iota
	cSlash
	cDot
	cCtrl  // control character: written as %XX
	cHigh  // not ASCII: the text must be checked for valid UTF-8
	cQuote // '"' or '\\': escaped in JSON
)

var class = func() (t [256]uint8) {
	for c := '0'; c <= '9'; c++ {
		t[c] = cDigit
	}
	t['/'], t['.'], t['"'], t['\\'] = cSlash, cDot, cQuote, cQuote
	for c := 0; c < 0x20; c++ {
		t[c] = cCtrl
	}
	t[0x7f] = cCtrl
	for c := 0x80; c < 0x100; c++ {
		t[c] = cHigh
	}
	return t
}()

// scanPath splits the decoded path into e.segs (empty segments dropped) in
// one pass, noting per segment what its features need. It reports whether
// the whole path is printable, valid UTF-8: then so is every segment (they
// are cut at an ASCII byte) and none needs appendClean.
func (e *Extractor) scanPath() (clean bool) {
	e.segs = e.segs[:0]
	path := e.path
	// The segment being scanned, in locals rather than a segment: a
	// struct of five fields is kept in memory, not in registers.
	start, dot, runs, nonDigit := 0, -1, 0, false
	var all uint8
	prevDigit := false
	for k, c := range path {
		t := class[c]
		all |= t
		if t&(cDigit|cSlash|cDot) == 0 { // most bytes
			nonDigit, prevDigit = true, false
			continue
		}
		if t&cDigit != 0 {
			if !prevDigit {
				runs++
			}
			prevDigit = true
			continue
		}
		prevDigit = false
		if t&cDot != 0 {
			dot, nonDigit = k, true
			continue
		}
		// A '/' ends the segment.
		if k > start {
			e.segs = append(e.segs, segment{start, k, dot, runs, nonDigit})
		}
		start, dot, runs, nonDigit = k+1, -1, 0, false
	}
	if len(path) > start {
		e.segs = append(e.segs, segment{start, len(path), dot, runs, nonDigit})
	}
	e.esc = e.esc || all&cQuote != 0
	return all&cCtrl == 0 && (all&cHigh == 0 || utf8.Valid(path))
}

// addWholeURL appends the whole-URL features; see the package doc.
func (e *Extractor) addWholeURL(rawURL string) {
	e.buf = append(e.buf, `"url_len:`...)
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
	e.buf = append(e.buf, `"params:`...)
	e.buf = strconv.AppendInt(e.buf, int64(len(e.names)), 10)
	e.end()
	if len(e.names) == 0 {
		e.buf = append(e.buf, `"query_empty:1`...)
		e.end()
		return
	}
	e.buf = append(e.buf, `"param_names:`...)
	for j, n := range e.names {
		if j > 0 {
			e.buf = append(e.buf, ',')
		}
		e.buf = append(e.buf, n...)
	}
	e.end()
}

// end ends the feature whose opening quote and text were just appended.
func (e *Extractor) end() {
	e.ends = append(e.ends, len(e.buf))
	e.buf = append(e.buf, '"', ',')
}

// dropIfRepeated removes the last feature if it already occurs at or after
// index from; it keeps features unique per URL.
func (e *Extractor) dropIfRepeated(from int) {
	last := len(e.ends) - 1
	f := e.Features()
	cur := f.At(last)
	for j := from; j < last; j++ {
		if string(f.At(j)) == string(cur) {
			e.buf = e.buf[:f.start(last)-1]
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
		e.buf = append(e.buf, `"param_name:`...)
		e.tmp = decode(e.tmp[:0], name, true)
		e.appendParam(e.tmp)
		e.end()
		e.dropIfRepeated(firstName)
	})
	firstPair := len(e.ends)
	eachParam(query, func(pair string) {
		if pair == "" || pair[0] == '=' {
			return
		}
		e.buf = append(e.buf, `"param:`...)
		e.tmp = decode(e.tmp[:0], pair, true)
		e.appendParam(e.tmp)
		e.end()
		e.dropIfRepeated(firstPair)
	})
}

// appendParam appends URL-derived text s to the feature being written,
// cleaned (appendClean) if it needs it, and notes a quote for AppendJSON.
func (e *Extractor) appendParam(s []byte) {
	var all uint8
	for _, c := range s {
		all |= class[c]
	}
	e.esc = e.esc || all&cQuote != 0
	if all&cCtrl != 0 || all&cHigh != 0 && !utf8.Valid(s) {
		e.buf = appendClean(e.buf, s)
		return
	}
	e.buf = append(e.buf, s...)
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

// addSegment appends the features of segment i; clean says its text needs
// no appendClean (see scanPath).
func (e *Extractor) addSegment(i int, s segment, clean bool) {
	seg := e.path[s.start:s.end]
	// Local copies, stored back once: appends to them stay in registers.
	b, ends := e.buf, e.ends
	end := func() {
		ends = append(ends, len(b))
		b = append(b, '"', ',')
	}
	// The index and ':' after each feature's name, as bytes of constant
	// count: a copy of a slice is a call to memmove.
	ix := func(b []byte) []byte {
		if i < 10 {
			return append(b, byte('0'+i), ':')
		}
		return append(appendInt(b, i), ':')
	}

	b = append(b, `"segment_name_`...)
	b = ix(b)
	b = appendText(b, seg, clean)
	end()
	if !s.nonDigit {
		b = append(b, `"segment_[0-9]_`...)
		b = ix(b)
		b = append(b, '1')
		end()
	}
	// ^[^\d]+\d+[^\d]+$: one run of digits with a non-digit at each end.
	substr := s.digitRuns == 1 && len(seg) >= 3 && !isDigit(seg[0]) && !isDigit(seg[len(seg)-1])
	if substr {
		b = append(b, `"segment_substr[0-9]_`...)
		b = ix(b)
		b = append(b, '1')
		end()
	}
	// The extension: the text after the last dot, if any.
	if s.dot >= 0 && s.dot < s.end-1 {
		ext := e.path[s.dot+1 : s.end]
		b = append(b, `"segment_ext_`...)
		b = ix(b)
		b = appendText(b, ext, clean)
		end()
		if substr {
			b = append(b, `"segment_ext_substr[0-9]_`...)
			b = ix(b)
			b = appendText(b, ext, clean)
			end()
		}
	}
	b = append(b, `"segment_len_`...)
	b = ix(b)
	b = appendInt(b, len(seg))
	end()
	e.buf, e.ends = b, ends
}

// appendText appends s, through appendClean unless clean.
func appendText(b, s []byte, clean bool) []byte {
	if clean {
		return append(b, s...)
	}
	return appendClean(b, s)
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

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// hexVal is the value of a hex digit, 0xff for any other byte.
var hexVal = func() (t [256]byte) {
	for c := range t {
		t[c] = 0xff
	}
	for c := byte(0); c < 10; c++ {
		t['0'+c] = c
	}
	for c := byte(0); c < 6; c++ {
		t['a'+c], t['A'+c] = 10+c, 10+c
	}
	return t
}()

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
			hi, lo := hexVal[s[k+1]], hexVal[s[k+2]]
			if hi|lo < 16 {
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
