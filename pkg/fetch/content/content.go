// Package content undoes HTTP content codings (gzip, deflate, br) with a cap
// on the decoded size, so a compression bomb costs a bounded amount of
// memory and time, and converts text to UTF-8 by its declared or sniffed
// charset. The fetcher uses it on live responses; WARC readers (barrel) can
// use it on archived ones, whose payloads keep their Content-Encoding.
package content

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/flate"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zlib"
	"golang.org/x/net/html/charset"
)

// ErrTooLarge is returned (wrapped) when the decoded body passes the cap;
// the bytes decoded up to the cap are still returned.
var ErrTooLarge = errors.New("decoded body over the size cap (compression bomb?)")

// ErrUnknownEncoding is returned for a Content-Encoding this package does
// not decode.
var ErrUnknownEncoding = errors.New("unknown content encoding")

// Decode undoes the content codings listed in contentEncoding (a
// Content-Encoding header value, codings applied in the order listed) and
// returns at most limit decoded bytes. On a body cut short (a truncated
// fetch) it returns what decoded cleanly and the error.
func Decode(body []byte, contentEncoding string, limit int64) ([]byte, error) {
	codings := strings.Split(strings.ToLower(contentEncoding), ",")
	out := body
	for i := len(codings) - 1; i >= 0; i-- {
		c := strings.TrimSpace(codings[i])
		var r io.Reader
		var err error
		switch c {
		case "", "identity":
			continue
		case "gzip", "x-gzip":
			var zr *gzip.Reader
			zr, err = gzip.NewReader(bytes.NewReader(out))
			r = zr
		case "deflate":
			// RFC 9110 deflate is zlib, but many servers send raw deflate.
			if len(out) >= 2 && (uint16(out[0])<<8|uint16(out[1]))%31 == 0 && out[0]&0x0f == 8 {
				r, err = zlib.NewReader(bytes.NewReader(out))
			} else {
				r = flate.NewReader(bytes.NewReader(out))
			}
		case "br":
			r = brotli.NewReader(bytes.NewReader(out))
		default:
			return out, fmt.Errorf("%w %q", ErrUnknownEncoding, c)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c, err)
		}
		dec, err := readCapped(r, limit)
		if err != nil {
			return dec, fmt.Errorf("%s: %w", c, err)
		}
		out = dec
	}
	return out, nil
}

func readCapped(r io.Reader, limit int64) ([]byte, error) {
	var buf bytes.Buffer
	n, err := io.Copy(&buf, io.LimitReader(r, limit+1))
	if n > limit {
		return buf.Bytes()[:limit], ErrTooLarge
	}
	if err != nil {
		return buf.Bytes(), err
	}
	return buf.Bytes(), nil
}

// ToUTF8 converts an HTML or text body to UTF-8 using, in order, a byte
// order mark, the charset of contentType, a <meta> charset in the first
// 1024 bytes, and a guess from the content (x/net/html/charset). It returns
// the text and the name of the encoding used.
func ToUTF8(body []byte, contentType string) ([]byte, string) {
	head := body
	if len(head) > 1024 {
		head = head[:1024]
	}
	enc, name, certain := charset.DetermineEncoding(head, contentType)
	// Without a declaration the library guesses windows-1252 from the first
	// 1024 bytes; a body that is valid UTF-8 throughout is UTF-8.
	if name == "utf-8" || name == "" || !certain && utf8.Valid(body) {
		return bytes.TrimPrefix(body, []byte("\xEF\xBB\xBF")), "utf-8"
	}
	out, err := enc.NewDecoder().Bytes(body)
	if err != nil {
		return bytes.ToValidUTF8(body, []byte("\uFFFD")), name
	}
	return out, name
}
