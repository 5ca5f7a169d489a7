// Package record is the toolkit's ground floor: the stream of newline-delimited
// JSON records that every tool reads and writes.
//
// A record is a JSON object kept as its line plus an ordered list of keys and
// raw JSON values, so a tool decodes only the fields it owns and every other
// field passes through byte for byte, in its original order. A line that is
// not a JSON object is a URL record: its trimmed text is the URL. This is what
// lets `cat urls.txt | urlfeat | sekitei` and any other order of tools compose.
//
// Parsing a line is one hand-written pass (scan.go) that checks the whole
// line against encoding/json's grammar and notes where each top-level key and
// value lie, without decoding or copying anything; the values stay slices of
// the record's one copy of the line and are decoded when a getter asks. A
// record whose fields were not changed is written back as the bytes read.
// The scanner is hand-written because the record layer, not the tools'
// algorithms, was most of every streaming tool's time, and a scanner that only
// finds boundaries can skip plain string bytes eight at a time and allocate
// nothing; FuzzParse holds it to encoding/json, line by line. Values of types
// not decoded here go through github.com/json-iterator/go; string encoding is
// hand-written because it is the hot path of every tool.
//
// The package knows nothing of crawling.
package record

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
	"unsafe"

	jsoniter "github.com/json-iterator/go"
)

// jsonAPI is the codec used for values whose type is not known in advance.
var jsonAPI = jsoniter.ConfigCompatibleWithStandardLibrary

// A Record is one JSON object of the stream.
// The zero value is an empty record with no url.
//
// A Record must not be copied by value: its field table may live inside it.
type Record struct {
	fields []field
	// Line is the record's line number in its input (1-based), 0 if it was
	// made in memory.
	Line int

	// src is the record's own copy of its line; the keys and values of the
	// parsed fields are slices of it, and it is never written to.
	src []byte
	// fields[:keep] are the line's own fields, unchanged, and src[:keepEnd]
	// is their text from the opening brace on, written out as it is.
	keep, keepEnd int
	// compact: the line was written as AppendJSON writes, so any run of
	// fields unchanged and adjacent in src goes out as its bytes.
	compact bool
	// borrowed: src is the caller's line (ParseView), never to be reused
	// as a buffer.
	borrowed bool
	url      string // the decoded url, once asked for
	urlDone  bool
	small    [8]field // backs fields for most records: no second allocation
}

type field struct {
	key   string
	raw   []byte // a complete JSON value, capacity capped at its length
	start int    // for a parsed field, the offset in src of its key
	end   int    // for a parsed field while unchanged, the offset in src just past raw; else 0
}

// New returns a record holding only the given url.
func New(url string) *Record {
	r := &Record{}
	r.fields = r.small[:0]
	r.setURLLine(url, nil)
	r.url, r.urlDone = url, true
	return r
}

// setURLLine makes r the record {"url":url}, built in buf's storage. It
// reports whether the URL was written without escapes, so that it lies
// as it is at src[8:].
func (r *Record) setURLLine(url string, buf []byte) bool {
	src := buf[:0]
	if cap(src) < len(url)+16 {
		src = make([]byte, 0, len(url)+16)
	}
	src = append(src, `{"url":`...)
	src = AppendString(src, url)
	end := len(src)
	src = append(src, '}')
	r.src = src
	r.fields = append(r.fields[:0], field{key: "url", raw: src[7:end:end], start: 1, end: end})
	r.keep, r.keepEnd, r.compact = 1, end, true
	return end-7 == len(url)+2
}

// ErrNotObject is returned by Parse for a line that starts like a JSON object
// but is not one.
var ErrNotObject = errors.New("not a JSON object")

// Parse turns one input line (without its newline) into a record.
// A line whose first non-blank byte is '{' must be a valid JSON object with a
// string "url"; any other line is a URL record. Parse keeps no reference to
// line: the record holds one copy of it.
func Parse(line []byte) (*Record, error) {
	r := &Record{}
	r.fields = r.small[:0]
	if err := r.parseLine(line, false); err != nil {
		return nil, err
	}
	return r, nil
}

// parseLine fills r, which must be fresh or reset, from line. With reuse,
// r's previous buffer holds the copy of the line and nothing r hands out
// may share it.
func (r *Record) parseLine(line []byte, reuse bool) error {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return errors.New("blank line")
	}
	buf := r.src[:0]
	if line[0] != '{' {
		if !utf8.Valid(line) {
			r.url = urlFromText(line)
			r.setURLLine(r.url, buf)
		} else if r.setURLLine(unsafe.String(unsafe.SliceData(line), len(line)), buf) && !reuse {
			r.url = unsafe.String(&r.src[8], len(line)) // shares the record's one buffer
		} else {
			r.url = string(line)
		}
		r.urlDone = true
		return nil
	}
	if utf8.Valid(line) {
		buf = append(buf, line...)
	} else {
		buf = appendValidUTF8(buf, line)
	}
	if err := r.parse(buf); err != nil {
		return err
	}
	return r.checkURL()
}

// checkURL checks that a parsed object has a string url.
func (r *Record) checkURL() error {
	raw, ok := r.Raw("url")
	if !ok {
		return errors.New(`record has no "url" field`)
	}
	if len(raw) == 0 || raw[0] != '"' {
		return errors.New(`"url" is not a string`)
	}
	return nil
}

// ParseInto is Parse into a record the caller reuses from line to line:
// r's buffers are reused, so that parsing costs no allocation per line
// (what Input.Reuse does for Each, for callers that read lines themselves).
// The same rules hold as for Input.Reuse: nothing from Raw may be kept past
// the next ParseInto; strings from URL, String and Decode are r's own.
// r must come from new(Record) or an earlier ParseInto.
func ParseInto(r *Record, line []byte) error {
	r.reset()
	return r.parseLine(line, true)
}

// ParseView is ParseInto without the copy: r keeps slices of line itself,
// which must stay unchanged for as long as r (or anything from its Raw) is
// used. It is for input held in memory as a whole (see ReadWhole), where
// copying each line would be most of the cost of reading it. A line that is
// not valid UTF-8, or is a plain URL, is copied as ParseInto does.
func ParseView(r *Record, line []byte) error {
	r.reset()
	line = bytes.TrimSpace(line)
	if len(line) == 0 || line[0] != '{' || !utf8.Valid(line) {
		return r.parseLine(line, true)
	}
	if err := r.parse(line); err != nil {
		r.src = nil
		return err
	}
	r.borrowed = true
	return r.checkURL()
}

// reset empties r for parseLine, keeping its buffers.
func (r *Record) reset() {
	if r.borrowed {
		r.src, r.borrowed = nil, false
	}
	clear(r.fields)
	r.fields = r.fields[:0]
	if r.fields == nil {
		r.fields = r.small[:0]
	}
	r.src = r.src[:0]
	if cap(r.src) > 4<<20 {
		r.src = nil // do not keep a huge buffer alive after a huge line
	}
	r.Line, r.keep, r.keepEnd, r.url, r.urlDone, r.compact = 0, 0, 0, "", false, false
}

// PlainURL reports whether line is a URL record whose url is its trimmed
// text as it is (not an object, valid UTF-8), and returns that url as a
// view of line: a string valid only while line is unchanged. It lets a tool
// that writes its own record for a plain URL skip building one.
func PlainURL(line []byte) (string, bool) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 || line[0] == '{' || !utf8.Valid(line) {
		return "", false
	}
	return unsafe.String(&line[0], len(line)), true
}

// urlFromText makes a URL from a plain text line. Bytes that are not valid
// UTF-8 are percent-encoded, as browsers do, so that the URL survives JSON.
func urlFromText(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	const hex = "0123456789ABCDEF"
	out := make([]byte, 0, len(b)+16)
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		if r == utf8.RuneError && size == 1 {
			out = append(out, '%', hex[b[0]>>4], hex[b[0]&15])
		} else {
			out = append(out, b[:size]...)
		}
		b = b[size:]
	}
	return string(out)
}

// parse reads the object that fills b (b[0] == '{', no space at either end)
// into r in one pass: it checks the whole line against the JSON grammar but
// only notes where each top-level key and value lie; values are decoded when
// a getter asks for them. b becomes the record's and must not change.
func (r *Record) parse(b []byte) error {
	r.src = b
	// compact: no space between the top-level tokens and every key written
	// as AppendString would write it, so b itself is the record's output.
	compact := true
	i := skipWS(b, 1)
	compact = compact && i == 1
	if i < len(b) && b[i] == '}' {
		i++
	} else {
		for {
			if i >= len(b) || b[i] != '"' {
				return objectError(b, &syntaxError{"expected a string key", i})
			}
			ke, esc, err := scanString(b, i)
			if err != nil {
				return objectError(b, err)
			}
			var key string
			if esc {
				key = unquote(b[i:ke])
				compact = false
			} else {
				key = unsafe.String(&b[i+1], ke-i-2)
				if strings.IndexByte(key, 0xE2) >= 0 && (strings.Contains(key, "\u2028") || strings.Contains(key, "\u2029")) {
					compact = false // AppendString escapes them
				}
			}
			j := skipWS(b, ke)
			if j >= len(b) || b[j] != ':' {
				return objectError(b, &syntaxError{"expected ':' after key", j})
			}
			vs := skipWS(b, j+1)
			ve, err := scanValue(b, vs, 1)
			if err != nil {
				return objectError(b, err)
			}
			compact = compact && j == ke && vs == j+1
			// Appended without a lookup: a line may hold a million keys.
			// Duplicate keys are kept as written; lookups see the first.
			r.fields = append(r.fields, field{key: key, raw: b[vs:ve:ve], start: i, end: ve})
			i = skipWS(b, ve)
			compact = compact && i == ve
			if i >= len(b) {
				return objectError(b, &syntaxError{"unterminated object", i})
			}
			if b[i] == '}' {
				i++
				break
			}
			if b[i] != ',' {
				return objectError(b, &syntaxError{"expected ',' or '}' in object", i})
			}
			i = skipWS(b, i+1)
			compact = compact && i == ve+1
		}
	}
	if i != len(b) {
		return objectError(b, &syntaxError{"data after the object", i})
	}
	if compact {
		r.keep, r.keepEnd, r.compact = len(r.fields), len(b)-1, true
	}
	return nil
}

// objectError words a syntax error as the toolkit always has: an object cut
// short or followed by more text is named as such, whatever broke first.
func objectError(b []byte, err *syntaxError) error {
	end := objectEnd(b)
	switch {
	case end < 0:
		return errors.New("invalid JSON: unterminated object")
	case end < len(b):
		return errors.New("invalid JSON: data after the object")
	}
	return errors.New("invalid JSON: " + err.Error())
}

// objectEnd returns the offset just past the '}' closing the object that
// starts line, or -1. It only tracks strings and nesting.
func objectEnd(line []byte) int {
	depth := 0
	inString := false
	for i := 0; i < len(line); i++ {
		c := line[i]
		if inString {
			switch c {
			case '\\':
				i++
			case '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				return i + 1
			}
		}
	}
	return -1
}

func shortErr(err error) string {
	s := err.Error()
	if i := strings.IndexByte(s, ','); i > 0 {
		s = s[:i]
	}
	if len(s) > 200 {
		s = s[:200]
	}
	return s
}

// URL returns the record's url, or "" if it has none.
func (r *Record) URL() string {
	if !r.urlDone {
		r.url, _ = r.String("url")
		r.urlDone = true
	}
	return r.url
}

// Keys returns the record's keys in order.
func (r *Record) Keys() []string {
	keys := make([]string, len(r.fields))
	for i, f := range r.fields {
		keys[i] = strings.Clone(f.key) // parsed keys share the line's buffer
	}
	return keys
}

// Has reports whether the record has key.
func (r *Record) Has(key string) bool { return r.index(key) >= 0 }

func (r *Record) index(key string) int {
	for i := range r.fields {
		if r.fields[i].key == key {
			return i
		}
	}
	return -1
}

// Raw returns the raw JSON value of key. The slice must not be modified.
func (r *Record) Raw(key string) ([]byte, bool) {
	if i := r.index(key); i >= 0 {
		return r.fields[i].raw, true
	}
	return nil, false
}

// present is Raw for the Raw* functions: nil only for a missing key.
func (r *Record) present(key string) []byte {
	raw, ok := r.Raw(key)
	if ok && raw == nil {
		return []byte{}
	}
	return raw
}

// IsNull reports whether key is missing or JSON null.
func (r *Record) IsNull(key string) bool {
	raw, ok := r.Raw(key)
	return !ok || string(raw) == "null"
}

// Decode unmarshals the value of key into v. A missing key leaves v
// untouched and returns false with a nil error. Strings, lists of strings
// and numbers are decoded here; other types go through json-iterator.
func (r *Record) Decode(key string, v any) (bool, error) {
	raw, ok := r.Raw(key)
	if !ok {
		return false, nil
	}
	if decodeFast(raw, v) {
		return true, nil
	}
	if err := jsonAPI.Unmarshal(raw, v); err != nil {
		return true, fmt.Errorf("field %q: %v", key, shortErr(err))
	}
	return true, nil
}

// decodeFast decodes raw into the most common targets without reflection and
// reports whether it did; anything else, errors included, is left to the
// general decoder so that its messages stay the same.
func decodeFast(raw []byte, v any) bool {
	switch p := v.(type) {
	case *string:
		if raw[0] != '"' {
			return false
		}
		*p = stringValue(raw)
		return true
	case *float64:
		if raw[0] != '-' && !isDigit(raw[0]) {
			return false
		}
		f, err := strconv.ParseFloat(unsafe.String(&raw[0], len(raw)), 64)
		if err != nil {
			return false
		}
		*p = f
		return true
	case *[]string:
		if raw[0] != '[' {
			return false
		}
		// Count first so that the list is allocated once.
		n, ok := 0, true
		eachElement(raw, func(e []byte) {
			n++
			ok = ok && e[0] == '"'
		})
		if !ok {
			return false
		}
		out := make([]string, 0, n)
		eachElement(raw, func(e []byte) { out = append(out, stringValue(e)) })
		*p = out
		return true
	}
	return false
}

// eachElement calls fn with each element of the array raw, which the
// scanner has checked.
func eachElement(raw []byte, fn func([]byte)) {
	i := skipWS(raw, 1)
	if raw[i] == ']' {
		return
	}
	for {
		end, _ := scanValue(raw, i, 0)
		fn(raw[i:end])
		i = skipWS(raw, end)
		if raw[i] == ']' {
			return
		}
		i = skipWS(raw, i+1)
	}
}

// stringValue decodes a checked JSON string into a string of its own.
func stringValue(raw []byte) string {
	body := raw[1 : len(raw)-1]
	if bytes.IndexByte(body, '\\') < 0 {
		return string(body)
	}
	return unquote(raw)
}

// String returns the value of key if it is a JSON string.
func (r *Record) String(key string) (string, bool) {
	raw, ok := r.Raw(key)
	if !ok || len(raw) < 2 || raw[0] != '"' {
		return "", false
	}
	return stringValue(raw), true
}

// StringView is String without the copy when the value has no escapes:
// the string then shares the record's line, and is valid only as long as
// the slices from Raw are (after ParseView, while the caller's line is).
// It is for a hot path that reads a string and lets it go, or clones it.
func (r *Record) StringView(key string) (string, bool) {
	raw, _ := r.Raw(key)
	return RawString(raw)
}

// Float returns the value of key as a finite number. A missing or null key
// gives ok false and a nil error; a value that is not a finite number gives
// an error naming the field. Numbers written as strings ("1.5") are accepted.
func (r *Record) Float(key string) (v float64, ok bool, err error) {
	return RawFloat(key, r.present(key))
}

// RawFloat is Record.Float for key's raw value (nil: missing).
func RawFloat(key string, raw []byte) (v float64, ok bool, err error) {
	if raw == nil || string(raw) == "null" {
		return 0, false, nil
	}
	s := raw
	if len(s) >= 2 && s[0] == '"' {
		s = s[1 : len(s)-1]
	}
	v, simple := parseSimpleFloat(s)
	var perr error
	if !simple {
		v, perr = strconv.ParseFloat(string(s), 64)
	}
	if perr != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, false, fmt.Errorf("field %q: not a finite number: %s", key, clip(raw))
	}
	return v, true, nil
}

// float64pow10 are the powers of ten a float64 holds exactly.
var float64pow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15}

// parseSimpleFloat parses the common form of a number, an optional minus,
// digits and an optional fraction, at most 15 digits in all: the digits as
// an integer are exact in a float64, and so is the power of ten, so one
// division gives the correctly rounded value, as strconv.ParseFloat's own
// fast path does. ok is false for any other form, left to ParseFloat.
func parseSimpleFloat(s []byte) (v float64, ok bool) {
	i, neg := 0, false
	if len(s) > 0 && s[0] == '-' {
		i, neg = 1, true
	}
	// The integer digits, then those of the fraction, in tight loops.
	var mant uint64
	start := i
	for ; i < len(s) && s[i]-'0' <= 9; i++ {
		mant = mant*10 + uint64(s[i]-'0')
	}
	digits, frac := i-start, 0
	if i < len(s) && s[i] == '.' && digits > 0 {
		i++
		fs := i
		for ; i < len(s) && s[i]-'0' <= 9; i++ {
			mant = mant*10 + uint64(s[i]-'0')
		}
		if frac = i - fs; frac == 0 {
			return 0, false
		}
	}
	if i != len(s) || digits == 0 || digits+frac > 15 {
		return 0, false
	}
	v = float64(mant) / float64pow10[frac]
	if neg {
		v = -v
	}
	return v, true
}

// Bool returns the value of key as a boolean; JSON true/false, and the
// strings "true"/"false"/"1"/"0" are accepted.
func (r *Record) Bool(key string) (v bool, ok bool, err error) {
	raw, present := r.Raw(key)
	if !present || string(raw) == "null" {
		return false, false, nil
	}
	switch string(raw) {
	case "true", `"true"`, "1", `"1"`:
		return true, true, nil
	case "false", `"false"`, "0", `"0"`:
		return false, true, nil
	}
	return false, false, fmt.Errorf("field %q: not a boolean: %s", key, clip(raw))
}

// Time returns the value of key as an RFC 3339 time.
func (r *Record) Time(key string) (t time.Time, ok bool, err error) {
	return RawTime(key, r.present(key))
}

// RawTime is Record.Time for key's raw value (nil: missing).
func RawTime(key string, raw []byte) (t time.Time, ok bool, err error) {
	if raw == nil || string(raw) == "null" {
		return time.Time{}, false, nil
	}
	if len(raw) < 2 || raw[0] != '"' {
		return time.Time{}, false, fmt.Errorf("field %q: not an RFC 3339 time: %s", key, clip(raw))
	}
	// The common unescaped case is parsed in place: time.Parse keeps no
	// reference to its input when it succeeds.
	var s string
	if body := raw[1 : len(raw)-1]; bytes.IndexByte(body, '\\') < 0 && len(body) > 0 {
		s = unsafe.String(&body[0], len(body))
	} else {
		s = stringValue(raw)
	}
	if t, ok := parseTimeZ(s); ok {
		return t, true, nil
	}
	t, perr := time.Parse(time.RFC3339Nano, s)
	if perr != nil {
		return time.Time{}, false, fmt.Errorf("field %q: not an RFC 3339 time: %q", key, s)
	}
	return t, true, nil
}

// parseTimeZ parses the common form of a time the tools write and read,
// "2006-01-02T15:04:05Z" with an optional fraction of up to nine digits,
// without time.Parse's general layout machinery; ok is false for any other
// form (or an out-of-range field), which time.Parse then handles, so that
// results and errors stay exactly time.Parse's.
func parseTimeZ(s string) (t time.Time, ok bool) {
	unix, ns, ok := parseUnixZ(s)
	if !ok {
		return time.Time{}, false
	}
	return time.Unix(unix, int64(ns)).UTC(), true
}

// RawUnixTime is RawTime's common case without a time.Time: for a raw
// value of the form parseTimeZ reads, a string without escapes, the Unix
// seconds and nanoseconds of the time RawTime gives; ok is false for any
// other value (missing, null, another form, an error), left to RawTime.
func RawUnixTime(raw []byte) (sec int64, nsec int, ok bool) {
	if len(raw) < 22 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return 0, 0, false
	}
	body := raw[1 : len(raw)-1]
	if bytes.IndexByte(body, '\\') >= 0 {
		return 0, 0, false
	}
	return parseUnixZ(unsafe.String(&body[0], len(body)))
}

// parseUnixZ is parseTimeZ giving the Unix seconds and nanoseconds.
func parseUnixZ(s string) (unix int64, nsec int, ok bool) {
	if len(s) < 20 || s[len(s)-1] != 'Z' || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':' {
		return 0, 0, false
	}
	// The fourteen digits of the date and time tested together, a word of
	// eight bytes at a time (digitsAt), then read without a test each.
	b := unsafe.Slice(unsafe.StringData(s), len(s))
	if !digitsAt(b[0:8], 0x00ffff00ffffffff) || !digitsAt(b[8:16], 0xffff00ffff00ffff) || !digitsAt(b[11:19], 0xffff00ffff00ffff) {
		return 0, 0, false
	}
	dig := func(i int) int { return int(s[i] - '0') }
	year := dig(0)*1000 + dig(1)*100 + dig(2)*10 + dig(3)
	month, day := dig(5)*10+dig(6), dig(8)*10+dig(9)
	hour, minute, sec := dig(11)*10+dig(12), dig(14)*10+dig(15), dig(17)*10+dig(18)
	num := func(from, to int) int {
		v := 0
		for i := from; i < to; i++ {
			c := s[i] - '0'
			if c > 9 {
				return -1
			}
			v = v*10 + int(c)
		}
		return v
	}
	ns := 0
	if len(s) > 20 {
		frac := s[19 : len(s)-1]
		if len(frac) < 2 || len(frac) > 10 || frac[0] != '.' {
			return 0, 0, false
		}
		ns = num(20, len(s)-1)
		if ns < 0 {
			return 0, 0, false
		}
		for i := len(frac) - 1; i < 9; i++ {
			ns *= 10
		}
	}
	if year < 0 || month < 1 || month > 12 || day < 1 || hour < 0 || hour > 23 || minute < 0 || minute > 59 || sec < 0 || sec > 59 {
		return 0, 0, false
	}
	if day > 28 && day > daysIn(month, year) {
		return 0, 0, false
	}
	// time.Date's result for fields in range, without its normalizing.
	unix = daysSinceEpoch(year, month, day)*86400 + int64(hour*3600+minute*60+sec)
	return unix, ns, true
}

// daysSinceEpoch is the number of days from 1970-01-01 to a valid date of
// the proleptic Gregorian calendar (negative before it), by the
// days-from-civil algorithm of Howard Hinnant, "chrono-Compatible
// Low-Level Date Algorithms" (2013).
// digitsAt tells whether the bytes of b (eight) that mask marks (0xff, the
// first byte lowest) are all ASCII digits: each byte xor '0', its high bit
// cleared so that adding 0x76 carries into no other byte, is a digit where
// neither that sum nor the byte itself reaches 0x80.
func digitsAt(b []byte, mask uint64) bool {
	const ones = 0x0101010101010101
	x := binary.LittleEndian.Uint64(b) ^ 0x30*ones
	return ((x&(0x7f*ones)+0x76*ones)|x)&(0x80*ones)&mask == 0
}

func daysSinceEpoch(year, month, day int) int64 {
	y := int64(year)
	if month <= 2 {
		y--
	}
	era := y / 400
	if y < 0 && y%400 != 0 {
		era-- // floor division
	}
	yoe := y - era*400
	m := int64(month)
	if m > 2 {
		m -= 3
	} else {
		m += 9
	}
	doy := (153*m+2)/5 + int64(day) - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}

func daysIn(month, year int) int {
	switch month {
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

func clip(raw []byte) string {
	if len(raw) > 60 {
		return string(raw[:60]) + "..."
	}
	return string(raw)
}

// setRaw sets key to raw without copying; callers own raw.
func (r *Record) setRaw(key string, raw []byte) {
	if key == "url" {
		r.urlDone = false
	}
	if i := r.index(key); i >= 0 {
		r.fields[i].raw = raw
		r.fields[i].end = 0 // changed: written from key and raw
		r.cut(i)
		return
	}
	r.fields = append(r.fields, field{key: key, raw: raw})
}

// cut ends the unchanged prefix before field i.
func (r *Record) cut(i int) {
	if i >= r.keep {
		return
	}
	r.keep = i
	if i == 0 {
		r.keepEnd = 0
	} else {
		r.keepEnd = r.fields[i-1].end
	}
}

// SetRaw sets key to a raw JSON value, replacing it in place if present or
// appending it. raw is copied.
func (r *Record) SetRaw(key string, raw []byte) {
	r.setRaw(key, append([]byte(nil), raw...))
}

// SetRawOwned sets key to a raw JSON value without copying it: the record
// keeps raw until it is reset or written, and the caller must not change
// raw before then. It lets a tool that reuses its record (Input.Reuse)
// build values in a buffer of its own and pay no allocation per record.
func (r *Record) SetRawOwned(key string, raw []byte) {
	r.setRaw(key, raw[:len(raw):len(raw)])
}

// SetString sets key to a JSON string.
func (r *Record) SetString(key, s string) {
	r.setRaw(key, AppendString(nil, s))
}

// SetStrings sets key to a JSON array of strings.
func (r *Record) SetStrings(key string, ss []string) {
	b := make([]byte, 0, 16*len(ss)+2)
	b = append(b, '[')
	for i, s := range ss {
		if i > 0 {
			b = append(b, ',')
		}
		b = AppendString(b, s)
	}
	r.setRaw(key, append(b, ']'))
}

// SetInt sets key to an integer.
func (r *Record) SetInt(key string, v int64) {
	r.setRaw(key, strconv.AppendInt(nil, v, 10))
}

// SetFloat sets key to a number in the shortest form that round-trips.
// NaN and infinities are written as null, so no tool ever emits invalid JSON.
func (r *Record) SetFloat(key string, v float64) {
	r.setRaw(key, AppendFloat(nil, v))
}

// SetBool sets key to true or false.
func (r *Record) SetBool(key string, v bool) {
	if v {
		r.setRaw(key, []byte("true"))
	} else {
		r.setRaw(key, []byte("false"))
	}
}

// TimeLayout is the one form of every time a tool writes: RFC 3339 in UTC
// with exactly three fraction digits, so times line up in columns and sort as
// text.
const TimeLayout = "2006-01-02T15:04:05.000Z"

// FormatTime formats t in TimeLayout.
func FormatTime(t time.Time) string { return t.UTC().Format(TimeLayout) }

// SetTime sets key to an RFC 3339 time in UTC, in TimeLayout.
func (r *Record) SetTime(key string, t time.Time) {
	b := make([]byte, 0, len(TimeLayout)+2)
	b = append(b, '"')
	b = t.UTC().AppendFormat(b, TimeLayout)
	r.setRaw(key, append(b, '"'))
}

// Set sets key to the JSON encoding of v.
func (r *Record) Set(key string, v any) error {
	raw, err := jsonAPI.Marshal(v)
	if err != nil {
		return fmt.Errorf("field %q: %v", key, err)
	}
	r.setRaw(key, raw)
	return nil
}

// Delete removes key, keeping the order of the rest.
func (r *Record) Delete(key string) {
	if key == "url" {
		r.urlDone = false
	}
	if i := r.index(key); i >= 0 {
		r.cut(i)
		r.fields = append(r.fields[:i], r.fields[i+1:]...)
	}
}

// AppendJSON appends the record as one JSON object (no newline) to b. The
// line's own fields, while unchanged, go out as the bytes that were read.
func (r *Record) AppendJSON(b []byte) []byte {
	if r.keep > 0 {
		b = append(b, r.src[:r.keepEnd]...)
	} else {
		b = append(b, '{')
	}
	for i := r.keep; i < len(r.fields); i++ {
		f := &r.fields[i]
		if i > 0 {
			b = append(b, ',')
		}
		if r.compact && f.end > 0 {
			// A run of unchanged fields that lay side by side in the line
			// goes out in one copy: replacing one field in the middle
			// (urlfeat's "host" in a fetch record) rebuilds only that one.
			j := i
			for j+1 < len(r.fields) && r.fields[j+1].end > 0 && r.fields[j+1].start == r.fields[j].end+1 {
				j++
			}
			b = append(b, r.src[f.start:r.fields[j].end]...)
			i = j
			continue
		}
		b = AppendString(b, f.key)
		b = append(b, ':')
		b = append(b, f.raw...)
	}
	return append(b, '}')
}

// MarshalJSON implements json.Marshaler.
func (r *Record) MarshalJSON() ([]byte, error) { return r.AppendJSON(nil), nil }

// AppendFloat appends v in the shortest form that round-trips, or null for
// NaN and infinities.
func AppendFloat(b []byte, v float64) []byte {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return append(b, "null"...)
	}
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return strconv.AppendInt(b, int64(v), 10)
	}
	return strconv.AppendFloat(b, v, 'g', -1, 64)
}

// plainByte marks the ASCII bytes AppendString copies as they are: all but
// control characters, '"' and '\\'.
var plainByte = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// AppendString appends s as a JSON string. Invalid UTF-8 becomes U+FFFD, as in
// encoding/json; '<', '>' and '&' are not escaped since the output is not HTML.
func AppendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		// Runs of bytes that go out as they are, most strings whole.
		for i < len(s) && plainByte[s[i]] {
			i++
		}
		if i == len(s) {
			break
		}
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&15])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, "\uFFFD"...)
			i++
			start = i
			continue
		}
		// U+2028 and U+2029 are valid JSON but break JavaScript consumers.
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&15])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
