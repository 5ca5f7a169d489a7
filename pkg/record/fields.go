package record

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"unicode/utf8"
	"unsafe"
)

// A FieldKind says what a FieldScanner makes of a field's value besides
// keeping its raw bytes.
type FieldKind uint8

const (
	// RawField: the raw value only (Value).
	RawField FieldKind = iota
	// NumberField: a bare number of the common form is also read as it
	// is scanned (Number).
	NumberField
	// TimeField: a string of the common RFC 3339 form is also read as it
	// is scanned (UnixTime).
	TimeField
)

// A Field is a key a FieldScanner picks and what it reads of its value.
type Field struct {
	Key  string
	Kind FieldKind
}

// A keyGuess is a key as guessAt matches it in place: its first 16 bytes
// as two little-endian words, zero-padded, and the masks of its bytes in
// them; its length; whether it is plain (see FieldScanner.plain).
type keyGuess struct {
	w     [4]uint64
	n     int
	plain bool
}

// maxFields is the most fields a FieldScanner picks (one bit each).
const maxFields = 63

// A FieldScanner reads a record line's url and a few other top-level fields
// in one pass over the line's bytes, with nothing allocated for the common
// line: the pass checks the line as ParseView does (JSON grammar, UTF-8,
// a string url), keeps the raw values of the fields asked for, reads their
// numbers and times where it scans them, and, where the url is a plain
// http(s) URL, notes its host as it scans the url. Every other field is
// skipped over, as the line is left untouched. It is for a tool that reads
// millions of records for a handful of fields and writes none of them back
// from that pass (recrawl rank's first pass).
//
// Scan takes the common line; it leaves to ParseView, which words the
// error or handles the line, what it does not do: a plain URL line, bytes
// that are not UTF-8, a key with an escape, and every line that is not a
// valid record. A FieldScanner is reused from line to line and is not safe
// for concurrent use.
type FieldScanner struct {
	keys []string
	// kind[k] is what is read of key k's value: the kinds of every key
	// equal to it (same), as bits 1<<Kind.
	kind []uint8
	// same[k] is the next key equal to keys[k] (-1: none): all of them
	// take the field's value.
	same []int
	// plain marks the keys that are written in JSON as their bytes in
	// quotes, and valid UTF-8: such a key is matched in place.
	plain []bool
	// urlK is the index of "url" among the keys (an index past the
	// caller's keys if not asked for: the url is always read).
	urlK int
	// next[k+1] is the key that followed key k on the last line (next[0]
	// the first key), tried first: the lines of one file mostly share
	// their keys' order, and the guess spares a lookup among the keys.
	next []int
	// guess[k] is what guessAt matches key k by.
	guess []keyGuess

	// Of the last line scanned: the keys present (have), those whose
	// number (numOK) or time (timeOK) was read, the values and results.
	have, numOK, timeOK uint64
	vals                [][]byte
	nums                []float64
	secs                []int64
	nsecs               []int32
	url                 string
	host                string // the plain host of the url, "" if none
	urlBuf              []byte // the decoded url, where it has escapes
	// dates are the dates of times of the common form read, by day of
	// the month: the times of a file share few dates, and a time on a
	// date read before needs only its time of day read.
	dates [64]knownDate

	// HostSeen, if set, is called in Scan with the host of a url that
	// starts with a plain host ("http://" or "https://", then the host,
	// then '/', '?', '#' or the url's end), as soon as the url's pass has
	// read it and before the rest of the line is read. It is a hint, for
	// a caller to start loading what it will look the host up in, while
	// the line is read: the line may yet prove bad, and the url not plain
	// (see Host). The string is a view of the line.
	HostSeen func(host string)
}

// NewFieldScanner returns a FieldScanner of the given fields, at most 63.
// A key may be given twice (with two kinds, say): both take the value.
func NewFieldScanner(fields ...Field) *FieldScanner {
	if len(fields) > maxFields {
		panic("record: a FieldScanner picks at most 63 fields")
	}
	n := len(fields)
	s := &FieldScanner{urlK: -1}
	for k, f := range fields {
		s.keys = append(s.keys, f.Key)
		if f.Key == "url" && s.urlK < 0 {
			s.urlK = k
		}
	}
	if s.urlK < 0 {
		s.urlK = n
		s.keys = append(s.keys, "url")
		fields = append(fields[:n:n], Field{Key: "url"})
	}
	m := len(s.keys)
	s.kind, s.same, s.plain = make([]uint8, m), make([]int, m), make([]bool, m)
	s.next, s.guess = make([]int, m+1), make([]keyGuess, m)
	s.vals, s.nums, s.secs, s.nsecs = make([][]byte, m), make([]float64, m), make([]int64, m), make([]int32, m)
	for k, key := range s.keys {
		g := &s.guess[k]
		for i := 0; i < len(key) && i < 16; i++ {
			g.w[i/8] |= uint64(key[i]) << (8 * (i % 8))
			g.w[2+i/8] |= 0xff << (8 * (i % 8))
		}
		s.plain[k] = len(key) > 0 && plainKey(key) && utf8.ValidString(key)
		g.n, g.plain = len(key), s.plain[k]
		s.same[k] = -1
		for l := k + 1; l < m; l++ {
			if s.keys[l] == key {
				s.same[k] = l
				break
			}
		}
		s.next[k] = -1
	}
	s.next[m] = -1
	for k := range s.keys {
		if s.index(s.keys[k]) != k {
			continue
		}
		for l := k; l >= 0; l = s.same[l] {
			s.kind[k] |= 1 << fields[l].Kind
		}
	}
	return s
}

// index returns the index of the first key equal to key, -1 if none.
func (s *FieldScanner) index(key string) int {
	for k, want := range s.keys {
		if len(want) == len(key) && want == key {
			return k
		}
	}
	return -1
}

// Scan reads line. ok true means that line is a valid JSON object with a
// string "url", that ParseView takes as it is (valid UTF-8, no key with an
// escape), and that the scanner's methods now give its fields; ok false
// leaves the line to ParseView, for what Scan does not do and to word its
// error. The values and strings given are views of line (URL: of the
// scanner's buffer where the url has an escape), valid while line is
// unchanged and until the next Scan.
func (s *FieldScanner) Scan(line []byte) (ok bool) {
	s.have, s.numOK, s.timeOK = 0, 0, 0
	s.url, s.host = "", ""
	b := line
	if len(b) == 0 || b[0] != '{' || b[len(b)-1] != '}' {
		b = bytes.TrimSpace(line) // else it has no space to trim
	}
	if len(b) == 0 || b[0] != '{' {
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
			k, ke := s.guessAt(b, i, prev)
			if k < 0 {
				var esc bool
				ke, esc = scanStringUTF8(b, i)
				if ke < 0 || esc {
					return false
				}
				k = s.index(unsafe.String(&b[i+1], ke-i-2))
			}
			j := skipWSFast(b, ke)
			if j >= len(b) || b[j] != ':' {
				return false
			}
			vs := skipWSFast(b, j+1)
			var ve int
			if k < 0 || s.have&(1<<k) != 0 {
				// A field not asked for, or a duplicated key's second
				// value (lookups see the first): checked and skipped.
				ve = skipValue(b, vs)
			} else {
				ve = s.value(b, vs, k)
				s.next[prev+1] = k
				prev = k
			}
			if ve < 0 {
				return false
			}
			i = skipWSFast(b, ve)
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
	// As checkURL: a string url.
	return i == len(b) && s.have&(1<<s.urlK) != 0 && s.vals[s.urlK][0] == '"'
}

// value reads the value at b[vs] of key k, not seen before on the line,
// and returns the offset past it, -1 if it is not valid.
func (s *FieldScanner) value(b []byte, vs, k int) int {
	if vs >= len(b) {
		return -1
	}
	kind := s.kind[k]
	var ve int
	switch c := b[vs]; {
	case c == '"' && k == s.urlK:
		ve = s.scanURL(b, vs)
	case c == '"' && kind&(1<<TimeField) != 0:
		ve = s.scanTime(b, vs, k)
	case (c-'0' <= 9 || c == '-') && kind&(1<<NumberField) != 0:
		end, v, simple, err := scanNumberValue(b, vs)
		if err != nil {
			return -1
		}
		if simple {
			s.nums[k] = v
			s.numOK |= 1 << k
			for l := s.same[k]; l >= 0; l = s.same[l] {
				s.nums[l] = v
				s.numOK |= 1 << l
			}
		}
		ve = end
	default:
		ve = skipValue(b, vs)
	}
	if ve < 0 {
		return -1
	}
	raw := b[vs:ve:ve]
	s.vals[k] = raw
	s.have |= 1 << k
	for l := s.same[k]; l >= 0; l = s.same[l] {
		s.vals[l] = raw
		s.have |= 1 << l
	}
	return ve
}

// scanTime scans the string at b[vs] of time key k and reads it where it
// has the form RawUnixTime reads.
func (s *FieldScanner) scanTime(b []byte, vs, k int) int {
	// The common form, "2006-01-02T15:04:05Z": its 20 bytes are read as
	// the time, which checks each of them (none a quote, a backslash or
	// a control), so the string needs no other pass.
	end := vs + 22
	var sec int64
	var nsec int
	ok := false
	if end <= len(b) && b[end-1] == '"' {
		t := b[vs+1 : vs+21]
		w0, w1 := binary.LittleEndian.Uint64(t), binary.LittleEndian.Uint16(t[8:])
		d := &s.dates[int(t[8]&3)<<4|int(t[9]&15)] // by the day of the month
		if d.ok && w0 == d.w0 && w1 == d.w1 {
			// A date read before: only the time of day to read.
			var tod int
			if tod, ok = timeOfDay(t); ok {
				sec = d.day*86400 + int64(tod)
			}
		} else if sec, nsec, ok = parseUnixZ(unsafe.String(&t[0], 20)); ok {
			tod, _ := timeOfDay(t)
			*d = knownDate{w0: w0, w1: w1, ok: true, day: (sec - int64(tod)) / 86400}
		}
	}
	if !ok {
		var esc bool
		if end, esc = scanStringUTF8(b, vs); end < 0 {
			return -1
		}
		if !esc && end-vs >= 22 {
			sec, nsec, ok = parseUnixZ(unsafe.String(&b[vs+1], end-vs-2))
		}
	}
	if ok {
		for l := k; l >= 0; l = s.same[l] {
			s.secs[l], s.nsecs[l] = sec, int32(nsec)
			s.timeOK |= 1 << l
		}
	}
	return end
}

// A knownDate is a date of a time parseUnixZ took: its first ten bytes as
// two words, and its day since the epoch.
type knownDate struct {
	w0  uint64
	w1  uint16
	ok  bool
	day int64
}

// timeOfDay reads the time of day of t, a time of the form
// "2006-01-02T15:04:05Z" whose date parseUnixZ has taken: its seconds
// since midnight, and ok where parseUnixZ takes the rest of t.
func timeOfDay(t []byte) (int, bool) {
	if t[10] != 'T' || t[13] != ':' || t[16] != ':' || t[19] != 'Z' || !digitsAt(t[11:19], 0xffff00ffff00ffff) {
		return 0, false
	}
	h, m, sec := int(t[11]-'0')*10+int(t[12]-'0'), int(t[14]-'0')*10+int(t[15]-'0'), int(t[17]-'0')*10+int(t[18]-'0')
	if h > 23 || m > 59 || sec > 59 {
		return 0, false
	}
	return h*3600 + m*60 + sec, true
}

// scanURL scans the url string at b[vs], decodes it (URL) and, where it
// is a plain http(s) URL, notes its host (Host), all in one pass.
func (s *FieldScanner) scanURL(b []byte, vs int) int {
	j := vs + 1
	hs := -1 // where the host starts, after the scheme
	if j+8 <= len(b) {
		switch w := binary.LittleEndian.Uint64(b[j:]); {
		case w == httpsWord:
			hs = j + 8
		case w&(1<<56-1) == httpWord:
			hs = j + 7
		}
	}
	plain := false
	he := 0
	if hs >= 0 {
		for he = hs; he < len(b) && urlHostByte[b[he]] == hostNameByte; he++ {
		}
		plain = he > hs && he < len(b) && urlHostByte[b[he]] == hostEndByte && b[he-1] != '.'
		if plain {
			j = he
			if s.HostSeen != nil {
				s.HostSeen(unsafe.String(&b[hs], he-hs))
			}
		}
	}
	end, flags := scanURLString(b, vs, j)
	if end < 0 {
		return -1
	}
	if flags&urlEscaped != 0 {
		s.urlBuf = appendUnquoted(s.urlBuf[:0], b[vs:end])
		s.url = unsafe.String(unsafe.SliceData(s.urlBuf), len(s.urlBuf))
		return end
	}
	if end-vs > 2 {
		s.url = unsafe.String(&b[vs+1], end-vs-2)
	}
	if plain && flags&urlControl == 0 {
		s.host = unsafe.String(&b[hs], he-hs)
	}
	return end
}

var (
	httpsWord = binary.LittleEndian.Uint64([]byte("https://"))
	httpWord  = binary.LittleEndian.Uint64([]byte("http://\x00"))
)

// urlHostByte classes the bytes of a url for the plain host: those of a
// plain host name (lower-case letters, digits, '-', '.'), those that end
// it ('/', '?', '#', and the url's closing quote), and the rest (0).
var urlHostByte = func() (t [256]uint8) {
	for c := 'a'; c <= 'z'; c++ {
		t[c] = hostNameByte
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = hostNameByte
	}
	t['-'], t['.'] = hostNameByte, hostNameByte
	t['/'], t['?'], t['#'], t['"'] = hostEndByte, hostEndByte, hostEndByte, hostEndByte
	return t
}()

const (
	hostNameByte = 1 + iota
	hostEndByte
)

const (
	urlEscaped = 1 << iota // the url string holds an escape
	urlControl             // the url holds a DEL (0x7f)
)

// scanURLString is scanStringUTF8 for the url string starting at b[i],
// from b[j] on (the bytes between already checked as plain), which also
// tells whether it holds an escape or a DEL. end is -1 if the string is not
// valid JSON or not UTF-8.
func scanURLString(b []byte, i, j int) (end int, flags uint8) {
	for {
		for j+8 <= len(b) {
			x := binary.LittleEndian.Uint64(b[j:])
			d := x ^ (lsb * 0x7f)
			if m := stringStopsUTF8(x) | (d-lsb)&^d&msb; m != 0 {
				j += bits.TrailingZeros64(m) >> 3 // the first stop
				break
			}
			j += 8
		}
		if j >= len(b) {
			return -1, 0
		}
		switch c := b[j]; {
		case c == '"':
			return j + 1, flags
		case c == '\\':
			flags |= urlEscaped
			if j = escapeEnd(b, j); j < 0 {
				return -1, 0
			}
		case c < 0x20:
			return -1, 0
		case c == 0x7f:
			flags |= urlControl
			j++
		case c >= utf8.RuneSelf:
			if j = runeEnd(b, j); j < 0 {
				return -1, 0
			}
		default:
			j++
		}
	}
}

// stringStopsUTF8 is stringStops that also marks the bytes over 0x7f.
func stringStopsUTF8(x uint64) uint64 {
	q := x ^ (lsb * '"')
	s := x ^ (lsb * '\\')
	return ((q-lsb)&^q | (s-lsb)&^s | (x-lsb*0x20)&^x | x) & msb
}

// escapeEnd returns the offset past the escape at b[j] == '\\', -1 if it
// is not a valid one.
func escapeEnd(b []byte, j int) int {
	if j+1 >= len(b) {
		return -1
	}
	switch b[j+1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return j + 2
	case 'u':
		if j+6 > len(b) || hex4(b[j+2:j+6]) < 0 {
			return -1
		}
		return j + 6
	}
	return -1
}

// runeEnd returns the offset past the UTF-8 sequence at b[j], -1 if it is
// not one.
func runeEnd(b []byte, j int) int {
	r, size := utf8.DecodeRune(b[j:])
	if r == utf8.RuneError && size == 1 {
		return -1
	}
	return j + size
}

// scanStringUTF8 is scanString that also checks that the string is UTF-8:
// the offset past the string at b[i] == '"' and whether it holds an
// escape; end is -1 if it is not valid JSON or not UTF-8.
func scanStringUTF8(b []byte, i int) (end int, esc bool) {
	j := i + 1
	for {
		for j+8 <= len(b) {
			if m := stringStopsUTF8(binary.LittleEndian.Uint64(b[j:])); m != 0 {
				j += bits.TrailingZeros64(m) >> 3
				break
			}
			j += 8
		}
		if j >= len(b) {
			return -1, false
		}
		switch c := b[j]; {
		case c == '"':
			return j + 1, esc
		case c == '\\':
			esc = true
			if j = escapeEnd(b, j); j < 0 {
				return -1, false
			}
		case c < 0x20:
			return -1, false
		case c >= utf8.RuneSelf:
			if j = runeEnd(b, j); j < 0 {
				return -1, false
			}
		default:
			j++
		}
	}
}

// skipValue checks the value at b[vs] and returns the offset past it, -1
// if it is not valid JSON or not UTF-8.
func skipValue(b []byte, vs int) int {
	if vs < len(b) && b[vs] == '"' {
		end, _ := scanStringUTF8(b, vs)
		return end
	}
	ve, err := scanValue(b, vs, 1)
	if err != nil {
		return -1
	}
	if c := b[vs]; (c == '[' || c == '{') && !isASCII(b[vs:ve]) && !utf8.Valid(b[vs:ve]) {
		return -1 // an array or object: its strings checked here
	}
	return ve
}

// guessAt tries the key that followed prev on the last line against the
// key string at b[i]: its index and the offset past the string if it is
// that key, -1 if not.
func (s *FieldScanner) guessAt(b []byte, i, prev int) (k, end int) {
	k = s.next[prev+1]
	if k < 0 {
		return -1, 0
	}
	g := &s.guess[k]
	end = i + 1 + g.n
	if !g.plain || end >= len(b) || b[end] != '"' {
		return -1, 0
	}
	if g.n <= 16 && i+17 <= len(b) {
		// The key's bytes as two masked words: no call to compare.
		if binary.LittleEndian.Uint64(b[i+1:])&g.w[2] != g.w[0] || binary.LittleEndian.Uint64(b[i+9:])&g.w[3] != g.w[1] {
			return -1, 0
		}
	} else if string(b[i+1:end]) != s.keys[k] {
		return -1, 0
	}
	return k, end + 1
}

// Value returns the raw JSON value of the k-th field on the last line
// scanned, nil if the line has no such field. The slice must not be
// modified.
func (s *FieldScanner) Value(k int) []byte {
	if s.have&(1<<k) == 0 {
		return nil
	}
	return s.vals[k]
}

// Number returns the k-th field's value as RawFloat gives it, where the
// field is a NumberField and its value a bare number of the common form
// (digits, an optional fraction, at most 15 digits, no exponent); ok is
// false for any other value (a string, an exponent, null, missing), left
// to RawFloat on Value(k).
func (s *FieldScanner) Number(k int) (v float64, ok bool) {
	return s.nums[k], s.numOK&(1<<k) != 0
}

// UnixTime returns the k-th field's time as RawUnixTime gives it, where
// the field is a TimeField and its value a string of the form RawUnixTime
// reads; ok is false for any other value, left to RawTime on Value(k).
func (s *FieldScanner) UnixTime(k int) (sec int64, nsec int, ok bool) {
	return s.secs[k], int(s.nsecs[k]), s.timeOK&(1<<k) != 0
}

// URL returns the line's url, decoded, as Record.URL gives it.
func (s *FieldScanner) URL() string { return s.url }

// Host returns the host of the url where the url has the plain form read
// in its pass: "http://" or "https://", a host of lower-case ASCII
// letters, digits, '-' and inner '.', then '/', '?', '#' or the end, with
// no escape and no control character in the string; the host is then
// urlx.Host's for the url. ok is false for any other url, left to
// urlx.Host.
func (s *FieldScanner) Host() (host string, ok bool) { return s.host, s.host != "" }

// plainKey tells whether key is written in JSON as its bytes in quotes.
func plainKey(key string) bool {
	for i := 0; i < len(key); i++ {
		if c := key[i]; c < 0x20 || c == '"' || c == '\\' {
			return false
		}
	}
	return true
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
