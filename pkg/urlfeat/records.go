package urlfeat

import (
	"bytes"
	"fmt"
	"strings"
	"unsafe"

	"github.com/sekitei/crawlkit/pkg/record"
)

// AppendJSON appends the features as a JSON array of strings. Feature text
// is valid UTF-8 without control characters (see the package doc), so only
// quotes and backslashes need escaping; a list without them, nearly every
// list, is already its JSON array in the buffer (see Extractor.buf).
func (f Features) AppendJSON(b []byte) []byte {
	if len(f.ends) == 0 {
		return append(b, "[]"...)
	}
	b = append(b, '[')
	if !f.esc {
		b = append(b, f.buf[:len(f.buf)-1]...) // without the last comma
		return append(b, ']')
	}
	for i, end := range f.ends {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = appendEscaped(b, f.buf[f.start(i):end])
		b = append(b, '"')
	}
	return append(b, ']')
}

// appendEscaped escapes quotes and backslashes; runs without them go in
// one copy.
func appendEscaped(b, feat []byte) []byte {
	for j := 0; j < len(feat); j++ {
		if c := feat[j]; c == '"' || c == '\\' {
			b = append(b, feat[:j]...)
			b = append(b, '\\', c)
			feat, j = feat[j+1:], -1
		}
	}
	return append(b, feat...)
}

// appendString is record.AppendString with a fast path for what nearly
// every URL and host is: printable ASCII without '"' or '\\', which goes
// out as it is.
func appendString(b []byte, s string) []byte {
	if !jsonPlain(s) {
		return record.AppendString(b, s)
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// appendURLString is appendString for a URL Extract took: valid UTF-8 (as
// record.PlainURL gives it) without control characters (urlx.Split refuses
// them). Then AppendString escapes only '"', '\\' and U+2028 and U+2029
// (whose UTF-8 begins with 0xE2), and three vector searches for these
// bytes tell whether it has anything to do.
func appendURLString(b []byte, u string) []byte {
	if strings.IndexByte(u, '"') >= 0 || strings.IndexByte(u, '\\') >= 0 || strings.IndexByte(u, 0xE2) >= 0 {
		return record.AppendString(b, u)
	}
	b = append(b, '"')
	b = append(b, u...)
	return append(b, '"')
}

// jsonPlain reports whether s is printable ASCII without '"' or '\\', eight
// bytes at a time: byte by byte, this test of each URL cost as much as
// splitting it.
func jsonPlain(s string) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	// A byte below n sets its high bit in (w - n*ones) &^ w, and only such
	// a byte can (the borrow starts at one); a byte equal to c is a zero
	// byte, below 1, in w ^ c*ones.
	below := func(w, n uint64) uint64 { return (w - n*ones) &^ w }
	i := 0
	for ; i+8 <= len(s); i += 8 {
		w := word(s[i : i+8])
		if (w|below(w, 0x20)|below(w^0x7f*ones, 1)|below(w^'"'*ones, 1)|below(w^'\\'*ones, 1))&highs != 0 {
			return false
		}
	}
	for ; i < len(s); i++ {
		if class[s[i]]&(cCtrl|cHigh|cQuote) != 0 {
			return false
		}
	}
	return true
}

// word reads the 8 bytes of s as a little-endian number; the compiler
// makes this one load.
func word(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// An Annotator does the per-URL command's work on one input line: it reads
// the line as a record, extracts the features of its url and appends the
// record with "host" and "features" set, as a JSON line without its
// newline. It reuses its buffers, so that a stream costs no allocation per
// line. It is not safe for concurrent use.
type Annotator struct {
	Extractor
	rec  record.Record
	vals []byte
}

// AppendLine appends the annotated record of line to dst. A line that is
// not a record, or whose url has no features, gives an error for that line
// and dst unchanged.
func (a *Annotator) AppendLine(dst, line []byte) ([]byte, error) {
	if b := bytes.TrimSpace(line); len(b) > 0 && b[0] != '{' && jsonPlain(unsafe.String(&b[0], len(b))) {
		// The common plain URL line, printable ASCII without '"' or '\\'
		// (one test, eight bytes at a time): valid UTF-8, as PlainURL
		// would check, without a control character, as urlx.Split
		// would, and its own JSON string, as appendURLString would.
		u := unsafe.String(&b[0], len(b))
		if _, err := a.extract(u, true); err != nil {
			return dst, lineError(err, u)
		}
		dst = append(dst, `{"url":"`...)
		dst = append(dst, u...)
		dst = append(dst, `","host":`...)
		if h := a.Host(); within(h, u) {
			// The host as written in the URL (nearly every host):
			// printable ASCII without quotes too.
			dst = append(dst, '"')
			dst = append(dst, h...)
			dst = append(dst, '"')
		} else {
			dst = appendString(dst, h)
		}
		dst = append(dst, `,"features":`...)
		dst = a.Features().AppendJSON(dst)
		return append(dst, '}'), nil
	}
	if u, ok := record.PlainURL(line); ok {
		// A plain URL line: the record {"url":u} with the two fields
		// added, written directly, as the record layer would write it.
		if _, err := a.Extract(u); err != nil {
			return dst, lineError(err, u)
		}
		dst = append(dst, `{"url":`...)
		dst = appendURLString(dst, u)
		dst = append(dst, `,"host":`...)
		dst = appendString(dst, a.Host())
		dst = append(dst, `,"features":`...)
		dst = a.Features().AppendJSON(dst)
		return append(dst, '}'), nil
	}
	// The record is a view of line: it is written out before this returns.
	if err := record.ParseView(&a.rec, line); err != nil {
		return dst, err
	}
	if err := a.Annotate(&a.rec); err != nil {
		return dst, err
	}
	return a.rec.AppendJSON(dst), nil
}

// within reports whether s is a part of u, the same bytes in memory.
func within(s, u string) bool {
	if len(s) == 0 || len(u) == 0 {
		return len(s) == 0
	}
	start := uintptr(unsafe.Pointer(unsafe.StringData(u)))
	p := uintptr(unsafe.Pointer(unsafe.StringData(s)))
	return p >= start && p+uintptr(len(s)) <= start+uintptr(len(u))
}

// Annotate sets r's "host" and "features" from its url. The values live in
// the Annotator's buffer: r must be written before the next call.
func (a *Annotator) Annotate(r *record.Record) error {
	u, _ := r.StringView("url") // used here only: no copy
	f, err := a.Extract(u)
	if err != nil {
		return lineError(err, u)
	}
	a.vals = appendString(a.vals[:0], a.Host())
	hostEnd := len(a.vals)
	a.vals = f.AppendJSON(a.vals)
	r.SetRawOwned("host", a.vals[:hostEnd])
	r.SetRawOwned("features", a.vals[hostEnd:])
	return nil
}

func lineError(err error, u string) error {
	if len(u) > 100 {
		u = u[:100] + "..."
	}
	return fmt.Errorf("%s: %q", err, u)
}
