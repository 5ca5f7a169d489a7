package record

import (
	"bytes"
	"encoding/binary"
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
	// nums[k] is key k's value where numOK[k]: a bare number of the form
	// parseSimpleFloat reads, parsed in the pass that scanned it.
	nums  []float64
	numOK []bool
	url   []byte
	// plain marks the keys that need no escape in JSON: such a key is
	// matched in place, its quoted bytes compared with the line's.
	plain []bool
	// same[k] is the next key equal to keys[k] (-1: none): all of them
	// take the field's value.
	same []int
	// urlK is the index of "url" among the keys, -1 if not asked for.
	urlK int
	// next[k+1] is the key that followed key k on the last line (next[0]
	// the first key), tried first: lines of one file mostly share their
	// keys' order, and the guess spares a lookup among all the keys.
	next []int
	// words[k] are key k's first 16 bytes as two little-endian words,
	// zero-padded, and the masks of its bytes in them (guessAt).
	words [][4]uint64
}

// NewPicker returns a Picker of the given keys.
func NewPicker(keys ...string) *Picker {
	p := &Picker{keys: keys, vals: make([][]byte, len(keys)), nums: make([]float64, len(keys)),
		numOK: make([]bool, len(keys)), plain: make([]bool, len(keys)),
		same: make([]int, len(keys)), next: make([]int, len(keys)+1), words: make([][4]uint64, len(keys))}
	for k, key := range keys {
		for i := 0; i < len(key) && i < 16; i++ {
			p.words[k][i/8] |= uint64(key[i]) << (8 * (i % 8))
			p.words[k][2+i/8] |= 0xff << (8 * (i % 8))
		}
		p.plain[k] = len(key) > 0 && plainKey(key)
		p.same[k] = -1
		for l := k + 1; l < len(keys); l++ {
			if keys[l] == key {
				p.same[k] = l
				break
			}
		}
		p.next[k] = -1
	}
	p.next[len(keys)] = -1
	p.urlK = p.index("url")
	return p
}

// plainKey tells whether key is written in JSON as its bytes in quotes.
func plainKey(key string) bool {
	for i := 0; i < len(key); i++ {
		if c := key[i]; c < 0x20 || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// Pick reads line. ok true means that line is a valid JSON object with a
// string "url", that ParseView would take as it is, and that Value now
// holds its fields; ok false leaves the line to ParseView, for what Pick
// does not do (a plain URL line, bytes that are not UTF-8, a key with an
// escape) and to word its error. The values are slices of line.
func (p *Picker) Pick(line []byte) (ok bool) {
	clear(p.vals)
	clear(p.numOK)
	p.url = nil
	b := line
	if len(b) == 0 || b[0] != '{' || b[len(b)-1] != '}' {
		b = bytes.TrimSpace(line) // else it has no space to trim
	}
	if len(b) == 0 || b[0] != '{' || !isASCII(b) && !utf8.Valid(b) {
		return false
	}
	i := skipWSFast(b, 1)
	if i < len(b) && b[i] == '}' {
		i++
	} else {
		prev := -1 // the last wanted key matched
		for {
			if i >= len(b) || b[i] != '"' {
				return false
			}
			k, ke := p.guessAt(b, i, prev)
			isURL := false
			if k < 0 {
				var esc bool
				var err *syntaxError
				ke, esc, err = scanString(b, i)
				if err != nil || esc {
					return false
				}
				key := unsafe.String(&b[i+1], ke-i-2)
				k = p.index(key)
				isURL = p.urlK < 0 && key == "url"
			}
			j := skipWSFast(b, ke)
			if j >= len(b) || b[j] != ':' {
				return false
			}
			vs := skipWSFast(b, j+1)
			if vs < len(b) && (b[vs]-'0' <= 9 || b[vs] == '-') && k >= 0 {
				// A wanted number, read as it is scanned.
				ve, v, simple, err := scanNumberValue(b, vs)
				if err != nil {
					return false
				}
				if simple && p.vals[k] == nil {
					for l := k; l >= 0; l = p.same[l] {
						p.nums[l], p.numOK[l] = v, true
					}
				}
				p.keep(k, b[vs:ve:ve])
				p.next[prev+1] = k
				prev = k
				i = skipWSFast(b, ve)
			} else {
				ve, err := scanValue(b, vs, 1)
				if err != nil {
					return false
				}
				if k >= 0 {
					p.keep(k, b[vs:ve:ve])
					p.next[prev+1] = k
					prev = k
				} else if isURL && p.url == nil {
					p.url = b[vs:ve:ve]
				}
				i = skipWSFast(b, ve)
			}
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
			i = skipWSFast(b, i+1)
		}
	}
	if p.urlK >= 0 {
		p.url = p.vals[p.urlK]
	}
	// As checkURL: a string url.
	return i == len(b) && len(p.url) > 0 && p.url[0] == '"'
}

// isASCII reports whether every byte of b is below 0x80, sixteen bytes
// at a time without a branch between: for the common ASCII line, quicker
// than utf8.Valid's own ASCII path (which tests every eight bytes).
func isASCII(b []byte) bool {
	var acc0, acc1 uint64
	for len(b) >= 16 {
		acc0 |= binary.LittleEndian.Uint64(b)
		acc1 |= binary.LittleEndian.Uint64(b[8:])
		b = b[16:]
	}
	for _, c := range b {
		acc0 |= uint64(c)
	}
	return (acc0|acc1)&msb == 0
}

// skipWSFast is skipWS with the common case, no space, inlined.
func skipWSFast(b []byte, i int) int {
	if i < len(b) && b[i] > ' ' {
		return i
	}
	return skipWS(b, i)
}

// guessAt tries the key that followed prev on the last line against the
// key string at b[i]: its index and the offset past the string if it is
// that key, -1 if not.
func (p *Picker) guessAt(b []byte, i, prev int) (k, end int) {
	k = p.next[prev+1]
	if k < 0 || !p.plain[k] {
		return -1, 0
	}
	key := p.keys[k]
	end = i + 1 + len(key)
	if end >= len(b) || b[end] != '"' {
		return -1, 0
	}
	if len(key) <= 16 && i+17 <= len(b) {
		// The key's bytes as two masked words: no call to compare.
		kw := &p.words[k]
		if binary.LittleEndian.Uint64(b[i+1:])&kw[2] != kw[0] || binary.LittleEndian.Uint64(b[i+9:])&kw[3] != kw[1] {
			return -1, 0
		}
	} else if string(b[i+1:end]) != key {
		return -1, 0
	}
	return k, end + 1
}

// index returns the index of the first key equal to key, -1 if none.
func (p *Picker) index(key string) int {
	for k, want := range p.keys {
		if len(want) == len(key) && want == key {
			return k
		}
	}
	return -1
}

// keep notes a field's value under key k and the keys equal to it, unless
// the line had the key before (lookups see a duplicated key's first
// value, as Record's do).
func (p *Picker) keep(k int, raw []byte) {
	if p.vals[k] != nil {
		return
	}
	for ; k >= 0; k = p.same[k] {
		p.vals[k] = raw
	}
}

// Value returns the raw JSON value of the k-th key on the last line
// picked, nil if the line has no such field. The slice must not be
// modified.
func (p *Picker) Value(k int) []byte { return p.vals[k] }

// Number returns the k-th key's value on the last line picked as RawFloat
// would give it, where that value is a bare number of the common form
// (digits, an optional fraction, at most 15 digits, no exponent), read in
// the pass that scanned it; ok is false for any other value (a string, an
// exponent, null, missing), left to RawFloat on Value(k).
func (p *Picker) Number(k int) (v float64, ok bool) { return p.nums[k], p.numOK[k] }

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
