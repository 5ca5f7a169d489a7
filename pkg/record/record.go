// Package record is the toolkit's ground floor: the stream of newline-delimited
// JSON records that every tool reads and writes.
//
// A record is a JSON object kept as an ordered list of keys and raw JSON values,
// so a tool decodes only the fields it owns and every other field passes
// through byte for byte, in its original order. A line that is not a JSON
// object is a URL record: its trimmed text is the URL. This is what lets
// `cat urls.txt | urlfeat | sekitei` and any other order of tools compose.
//
// The package knows nothing of crawling. JSON scanning goes through
// github.com/json-iterator/go; string encoding is hand-written because it is
// the hot path of every tool and needs no reflection.
package record

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"
	"unicode/utf8"

	jsoniter "github.com/json-iterator/go"
)

// jsonAPI is the codec used for values whose type is not known in advance.
var jsonAPI = jsoniter.ConfigCompatibleWithStandardLibrary

// A Record is one JSON object of the stream.
// The zero value is an empty record with no url.
type Record struct {
	fields []field
	// Line is the record's line number in its input (1-based), 0 if it was
	// made in memory.
	Line int
}

type field struct {
	key string
	raw []byte // a complete JSON value
}

// New returns a record holding only the given url.
func New(url string) *Record {
	r := &Record{}
	r.SetString("url", url)
	return r
}

// ErrNotObject is returned by Parse for a line that starts like a JSON object
// but is not one.
var ErrNotObject = errors.New("not a JSON object")

// Parse turns one input line (without its newline) into a record.
// A line whose first non-blank byte is '{' must be a valid JSON object with a
// string "url"; any other line is a URL record. Parse keeps no reference to
// line.
func Parse(line []byte) (*Record, error) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return nil, errors.New("blank line")
	}
	if line[0] != '{' {
		return New(urlFromText(line)), nil
	}
	if !utf8.Valid(line) {
		line = bytes.ToValidUTF8(line, []byte("\uFFFD"))
	}
	r, err := parseObject(line)
	if err != nil {
		return nil, err
	}
	raw, ok := r.Raw("url")
	if !ok {
		return nil, errors.New(`record has no "url" field`)
	}
	if len(raw) == 0 || raw[0] != '"' {
		return nil, errors.New(`"url" is not a string`)
	}
	return r, nil
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

func parseObject(line []byte) (*Record, error) {
	end := objectEnd(line)
	if end < 0 {
		return nil, errors.New("invalid JSON: unterminated object")
	}
	if rest := bytes.TrimSpace(line[end:]); len(rest) > 0 {
		return nil, errors.New("invalid JSON: data after the object")
	}
	// One buffer backs every raw value. Its capacity is the line's length,
	// which bounds the captured bytes, so appends never move it and earlier
	// slices stay valid.
	store := make([]byte, 0, end)
	it := jsonAPI.BorrowIterator(line[:end])
	defer jsonAPI.ReturnIterator(it)
	r := &Record{fields: make([]field, 0, 8)}
	ok := it.ReadObjectCB(func(it *jsoniter.Iterator, key string) bool {
		n := len(store)
		store = it.SkipAndAppendBytes(store)
		if it.Error != nil {
			return false
		}
		// Appended without a lookup: a line may hold a million keys.
		// Duplicate keys are kept as written; lookups see the first.
		r.fields = append(r.fields, field{key, bytes.TrimSpace(store[n:len(store):len(store)])})
		return true
	})
	if !ok || it.Error != nil {
		msg := "invalid JSON object"
		if it.Error != nil {
			msg = "invalid JSON: " + shortErr(it.Error)
		}
		return nil, errors.New(msg)
	}
	return r, nil
}

// objectEnd returns the offset just past the '}' closing the object that
// starts line, or -1. It only tracks strings and nesting; jsoniter validates.
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
	if i := bytes.IndexByte([]byte(s), ','); i > 0 {
		s = s[:i]
	}
	if len(s) > 200 {
		s = s[:200]
	}
	return s
}

// URL returns the record's url, or "" if it has none.
func (r *Record) URL() string {
	s, _ := r.String("url")
	return s
}

// Keys returns the record's keys in order.
func (r *Record) Keys() []string {
	keys := make([]string, len(r.fields))
	for i, f := range r.fields {
		keys[i] = f.key
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

// IsNull reports whether key is missing or JSON null.
func (r *Record) IsNull(key string) bool {
	raw, ok := r.Raw(key)
	return !ok || string(raw) == "null"
}

// Decode unmarshals the value of key into v. A missing key leaves v
// untouched and returns false with a nil error.
func (r *Record) Decode(key string, v any) (bool, error) {
	raw, ok := r.Raw(key)
	if !ok {
		return false, nil
	}
	if err := jsonAPI.Unmarshal(raw, v); err != nil {
		return true, fmt.Errorf("field %q: %v", key, shortErr(err))
	}
	return true, nil
}

// String returns the value of key if it is a JSON string.
func (r *Record) String(key string) (string, bool) {
	raw, ok := r.Raw(key)
	if !ok || len(raw) < 2 || raw[0] != '"' {
		return "", false
	}
	if bytes.IndexByte(raw[1:len(raw)-1], '\\') < 0 {
		return string(raw[1 : len(raw)-1]), true
	}
	var s string
	if err := jsonAPI.Unmarshal(raw, &s); err != nil {
		return "", false
	}
	return s, true
}

// Float returns the value of key as a finite number. A missing or null key
// gives ok false and a nil error; a value that is not a finite number gives
// an error naming the field. Numbers written as strings ("1.5") are accepted.
func (r *Record) Float(key string) (v float64, ok bool, err error) {
	raw, present := r.Raw(key)
	if !present || string(raw) == "null" {
		return 0, false, nil
	}
	s := raw
	if len(s) >= 2 && s[0] == '"' {
		s = s[1 : len(s)-1]
	}
	v, perr := strconv.ParseFloat(string(s), 64)
	if perr != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, false, fmt.Errorf("field %q: not a finite number: %s", key, clip(raw))
	}
	return v, true, nil
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
	raw, present := r.Raw(key)
	if !present || string(raw) == "null" {
		return time.Time{}, false, nil
	}
	s, isStr := r.String(key)
	if !isStr {
		return time.Time{}, false, fmt.Errorf("field %q: not an RFC 3339 time: %s", key, clip(raw))
	}
	t, perr := time.Parse(time.RFC3339Nano, s)
	if perr != nil {
		return time.Time{}, false, fmt.Errorf("field %q: not an RFC 3339 time: %q", key, s)
	}
	return t, true, nil
}

func clip(raw []byte) string {
	if len(raw) > 60 {
		return string(raw[:60]) + "..."
	}
	return string(raw)
}

// setRaw sets key to raw without copying; callers own raw.
func (r *Record) setRaw(key string, raw []byte) {
	if i := r.index(key); i >= 0 {
		r.fields[i].raw = raw
		return
	}
	r.fields = append(r.fields, field{key, raw})
}

// SetRaw sets key to a raw JSON value, replacing it in place if present or
// appending it. raw is copied.
func (r *Record) SetRaw(key string, raw []byte) {
	r.setRaw(key, append([]byte(nil), raw...))
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
	r.setRaw(key, strconv.AppendBool(nil, v))
}

// SetTime sets key to an RFC 3339 time in UTC.
func (r *Record) SetTime(key string, t time.Time) {
	r.SetString(key, t.UTC().Format(time.RFC3339Nano))
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
	if i := r.index(key); i >= 0 {
		r.fields = append(r.fields[:i], r.fields[i+1:]...)
	}
}

// AppendJSON appends the record as one JSON object (no newline) to b.
func (r *Record) AppendJSON(b []byte) []byte {
	b = append(b, '{')
	for i, f := range r.fields {
		if i > 0 {
			b = append(b, ',')
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

// AppendString appends s as a JSON string. Invalid UTF-8 becomes U+FFFD, as in
// encoding/json; '<', '>' and '&' are not escaped since the output is not HTML.
func AppendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
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
