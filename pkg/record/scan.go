package record

import (
	"encoding/binary"
	"math/bits"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// maxDepth is encoding/json's nesting limit, kept so that the same lines are
// accepted.
const maxDepth = 10000

// A syntaxError is where and why a line is not JSON.
type syntaxError struct {
	msg string
	off int
}

func (e *syntaxError) Error() string { return e.msg + " at offset " + strconv.Itoa(e.off) }

func isWS(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func skipWS(b []byte, i int) int {
	for i < len(b) && isWS(b[i]) {
		i++
	}
	return i
}

const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// stringStops marks the bytes of x (8 bytes, little-endian) that end a run
// of plain string bytes: a quote, a backslash or a control character. The
// lowest mark is exact, those above it may be false (a borrow carries into
// the next byte), which is all the caller asks: where the first one is.
func stringStops(x uint64) uint64 {
	q := x ^ (lsb * '"')
	s := x ^ (lsb * '\\')
	return ((q-lsb)&^q | (s-lsb)&^s | (x-lsb*0x20)&^x) & msb
}

// scanString checks the string starting at b[i] == '"' and returns the offset
// just past its closing quote and whether it holds an escape.
func scanString(b []byte, i int) (int, bool, *syntaxError) {
	j := i + 1
	esc := false
	for {
		for j+8 <= len(b) {
			if m := stringStops(binary.LittleEndian.Uint64(b[j:])); m != 0 {
				j += bits.TrailingZeros64(m) >> 3 // the first stop
				break
			}
			j += 8
		}
		if j >= len(b) {
			return 0, false, &syntaxError{"unterminated string", i}
		}
		switch c := b[j]; {
		case c == '"':
			return j + 1, esc, nil
		case c == '\\':
			esc = true
			if j+1 >= len(b) {
				return 0, false, &syntaxError{"unterminated string", i}
			}
			switch b[j+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				j += 2
			case 'u':
				if j+6 > len(b) || hex4(b[j+2:j+6]) < 0 {
					return 0, false, &syntaxError{`invalid \u escape in string`, j}
				}
				j += 6
			default:
				return 0, false, &syntaxError{"invalid escape in string", j}
			}
		case c < 0x20:
			return 0, false, &syntaxError{"control character in string", j}
		default:
			j++
		}
	}
}

func hex4(b []byte) rune {
	var r rune
	for _, c := range b[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// scanNumber checks the JSON number at b[i] and returns the offset past it.
func scanNumber(b []byte, i int) (int, *syntaxError) {
	start := i
	if b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && '1' <= b[i] && b[i] <= '9':
		for i++; i < len(b) && isDigit(b[i]); i++ {
		}
	default:
		return 0, &syntaxError{"invalid number", start}
	}
	if i < len(b) && b[i] == '.' {
		i++
		if i >= len(b) || !isDigit(b[i]) {
			return 0, &syntaxError{"invalid number", start}
		}
		for i++; i < len(b) && isDigit(b[i]); i++ {
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || !isDigit(b[i]) {
			return 0, &syntaxError{"invalid number", start}
		}
		for i++; i < len(b) && isDigit(b[i]); i++ {
		}
	}
	return i, nil
}

// scanNumberValue is scanNumber that also reads the number where it has
// parseSimpleFloat's form: an optional minus, digits and an optional
// fraction, at most 15 digits in all, no exponent. simple tells whether v
// holds it, the same float64 as parseSimpleFloat gives for the same bytes
// (one division of the digits by a power of ten, both exact).
func scanNumberValue(b []byte, i int) (end int, v float64, simple bool, err *syntaxError) {
	start := i
	neg := false
	if b[i] == '-' {
		i++
		neg = true
	}
	var mant uint64
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && '1' <= b[i] && b[i] <= '9':
		for ; i < len(b) && isDigit(b[i]); i++ {
			mant = mant*10 + uint64(b[i]-'0')
		}
	default:
		return 0, 0, false, &syntaxError{"invalid number", start}
	}
	digits := i - start
	if neg {
		digits--
	}
	frac := 0
	if i < len(b) && b[i] == '.' {
		i++
		if i >= len(b) || !isDigit(b[i]) {
			return 0, 0, false, &syntaxError{"invalid number", start}
		}
		fs := i
		for ; i < len(b) && isDigit(b[i]); i++ {
			mant = mant*10 + uint64(b[i]-'0')
		}
		frac = i - fs
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		end, err := scanNumber(b, start)
		return end, 0, false, err
	}
	if digits+frac > 15 {
		return i, 0, false, nil
	}
	v = float64(mant) / float64pow10[frac]
	if neg {
		v = -v
	}
	return i, v, true, nil
}

func scanLiteral(b []byte, i int, lit string) (int, *syntaxError) {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return 0, &syntaxError{"invalid value", i}
	}
	return i + len(lit), nil
}

// scanValue checks the JSON value at b[i] (no leading space) and returns the
// offset just past it. depth is the nesting of the value's container.
func scanValue(b []byte, i, depth int) (int, *syntaxError) {
	if i >= len(b) {
		return 0, &syntaxError{"unexpected end of line", i}
	}
	switch c := b[i]; {
	case c == '"':
		end, _, err := scanString(b, i)
		return end, err
	case c == '-' || isDigit(c):
		return scanNumber(b, i)
	case c == 't':
		return scanLiteral(b, i, "true")
	case c == 'f':
		return scanLiteral(b, i, "false")
	case c == 'n':
		return scanLiteral(b, i, "null")
	case c == '[':
		if depth+1 > maxDepth {
			return 0, &syntaxError{"exceeded max depth", i}
		}
		i = skipWS(b, i+1)
		if i < len(b) && b[i] == ']' {
			return i + 1, nil
		}
		for {
			var err *syntaxError
			if i, err = scanValue(b, i, depth+1); err != nil {
				return 0, err
			}
			i = skipWS(b, i)
			if i >= len(b) {
				return 0, &syntaxError{"unterminated array", i}
			}
			switch b[i] {
			case ',':
				i = skipWS(b, i+1)
			case ']':
				return i + 1, nil
			default:
				return 0, &syntaxError{"expected ',' or ']' in array", i}
			}
		}
	case c == '{':
		if depth+1 > maxDepth {
			return 0, &syntaxError{"exceeded max depth", i}
		}
		i = skipWS(b, i+1)
		if i < len(b) && b[i] == '}' {
			return i + 1, nil
		}
		for {
			if i >= len(b) || b[i] != '"' {
				return 0, &syntaxError{"expected a string key", i}
			}
			var err *syntaxError
			if i, _, err = scanString(b, i); err != nil {
				return 0, err
			}
			i = skipWS(b, i)
			if i >= len(b) || b[i] != ':' {
				return 0, &syntaxError{"expected ':' after key", i}
			}
			if i, err = scanValue(b, skipWS(b, i+1), depth+1); err != nil {
				return 0, err
			}
			i = skipWS(b, i)
			if i >= len(b) {
				return 0, &syntaxError{"unterminated object", i}
			}
			switch b[i] {
			case ',':
				i = skipWS(b, i+1)
			case '}':
				return i + 1, nil
			default:
				return 0, &syntaxError{"expected ',' or '}' in object", i}
			}
		}
	}
	return 0, &syntaxError{"invalid value", i}
}

// unquote decodes the JSON string s (with its quotes, already checked by
// scanString) the way encoding/json does: a lone surrogate escape and each
// byte that is not UTF-8 become U+FFFD.
func unquote(s []byte) string {
	return string(appendUnquoted(make([]byte, 0, len(s)-2), s))
}

// appendUnquoted appends the decoded JSON string s (as unquote takes it)
// to out.
func appendUnquoted(out, s []byte) []byte {
	s = s[1 : len(s)-1]
	for i := 0; i < len(s); {
		c := s[i]
		if c == '\\' {
			switch s[i+1] {
			case 'b':
				out = append(out, '\b')
			case 'f':
				out = append(out, '\f')
			case 'n':
				out = append(out, '\n')
			case 'r':
				out = append(out, '\r')
			case 't':
				out = append(out, '\t')
			case 'u':
				r := hex4(s[i+2:])
				i += 6
				if utf16.IsSurrogate(r) {
					r2 := rune(-1)
					if i+6 <= len(s) && s[i] == '\\' && s[i+1] == 'u' {
						r2 = hex4(s[i+2:])
					}
					if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
						out = utf8.AppendRune(out, d)
						i += 6
						continue
					}
					r = utf8.RuneError
				}
				out = utf8.AppendRune(out, r)
				continue
			default: // '"', '\\', '/'
				out = append(out, s[i+1])
			}
			i += 2
			continue
		}
		if c < utf8.RuneSelf {
			out = append(out, c)
			i++
			continue
		}
		r, size := utf8.DecodeRune(s[i:])
		if r == utf8.RuneError && size == 1 {
			out = append(out, "\uFFFD"...)
		} else {
			out = append(out, s[i:i+size]...)
		}
		i += size
	}
	return out
}

// appendValidUTF8 appends b to dst with each byte that is not part of a UTF-8
// sequence replaced by U+FFFD, as encoding/json reads strings.
func appendValidUTF8(dst, b []byte) []byte {
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, "\uFFFD"...)
		} else {
			dst = append(dst, b[:size]...)
		}
		b = b[size:]
	}
	return dst
}
