package record

import (
	"bytes"
	"unicode/utf8"
	"unsafe"
)

// A Picker reads a few top-level fields of record lines without making a
// Record: one pass checks the line as ParseView does and keeps the raw
// values of the picker's keys, and nothing is written per field. It is for
// a tool that reads millions of records for a handful of their fields and
// writes none of them back from that pass (recrawl rank's first pass).
// A Picker is reused from line to line and is not safe for concurrent use.
type Picker struct {
	keys []string
	vals [][]byte
	url  []byte
}

// NewPicker returns a Picker of the given keys.
func NewPicker(keys ...string) *Picker {
	return &Picker{keys: keys, vals: make([][]byte, len(keys))}
}

// Pick reads line. ok true means that line is a valid JSON object with a
// string "url", that ParseView would take as it is, and that Value now
// holds its fields; ok false leaves the line to ParseView, for what Pick
// does not do (a plain URL line, bytes that are not UTF-8, a key with an
// escape) and to word its error. The values are slices of line.
func (p *Picker) Pick(line []byte) (ok bool) {
	clear(p.vals)
	p.url = nil
	b := bytes.TrimSpace(line)
	if len(b) == 0 || b[0] != '{' || !utf8.Valid(b) {
		return false
	}
	i := skipWS(b, 1)
	if i < len(b) && b[i] == '}' {
		i++
	} else {
		for {
			if i >= len(b) || b[i] != '"' {
				return false
			}
			ke, esc, err := scanString(b, i)
			if err != nil || esc {
				return false
			}
			key := unsafe.String(&b[i+1], ke-i-2)
			j := skipWS(b, ke)
			if j >= len(b) || b[j] != ':' {
				return false
			}
			vs := skipWS(b, j+1)
			ve, err := scanValue(b, vs, 1)
			if err != nil {
				return false
			}
			p.keep(key, b[vs:ve:ve])
			i = skipWS(b, ve)
			if i >= len(b) {
				return false
			}
			if b[i] == '}' {
				i++
				break
			}
			if b[i] != ',' {
				return false
			}
			i = skipWS(b, i+1)
		}
	}
	// As checkURL: a string url.
	return i == len(b) && len(p.url) > 0 && p.url[0] == '"'
}

// keep notes a field's value if its key is wanted and not seen before on
// the line (lookups see a duplicated key's first value, as Record's do).
func (p *Picker) keep(key string, raw []byte) {
	if key == "url" && p.url == nil {
		p.url = raw
	}
	for k, want := range p.keys {
		if len(want) == len(key) && want == key && p.vals[k] == nil {
			p.vals[k] = raw
		}
	}
}

// Value returns the raw JSON value of the k-th key on the last line
// picked, nil if the line has no such field. The slice must not be
// modified.
func (p *Picker) Value(k int) []byte { return p.vals[k] }

// RawString is Record.StringView for a raw value (nil: missing).
func RawString(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' {
		return "", false
	}
	if body := raw[1 : len(raw)-1]; len(body) > 0 && bytes.IndexByte(body, '\\') < 0 {
		return unsafe.String(&body[0], len(body)), true
	}
	return stringValue(raw), true
}
