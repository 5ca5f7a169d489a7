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

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/flate"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zlib"
	"github.com/sekitei/crawlkit/pkg/charset"
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
	return DecodeInto(nil, body, contentEncoding, limit)
}

// DecodeInto is Decode writing the last coding's output into dst's
// storage (grown if need be), so that a caller decoding body after body
// reuses one buffer instead of making garbage of each.
func DecodeInto(dst, body []byte, contentEncoding string, limit int64) ([]byte, error) {
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
		var into []byte
		if i == 0 {
			into = dst[:0]
		}
		dec, err := readCapped(r, limit, into)
		if err != nil {
			return dec, fmt.Errorf("%s: %w", c, err)
		}
		out = dec
	}
	return out, nil
}

// readCapped reads r up to limit bytes into a buffer grown by doubling but
// never past limit+1, so a compression bomb costs at most about 1.5 x
// limit (the last copy), not the next power of two above it.
func readCapped(r io.Reader, limit int64, buf []byte) ([]byte, error) {
	if cap(buf) == 0 {
		buf = make([]byte, 0, min(64<<10, limit+1))
	}
	for {
		if int64(len(buf)) > limit {
			return buf[:limit], ErrTooLarge
		}
		if len(buf) == cap(buf) {
			grown := make([]byte, len(buf), min(2*int64(cap(buf)), limit+1))
			copy(grown, buf)
			buf = grown
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			if int64(len(buf)) > limit {
				return buf[:limit], ErrTooLarge
			}
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}

// ToUTF8 converts an HTML or text body to UTF-8 by the one charset
// decision of package charset (BOM, Content-Type, <meta>, then a guess that
// tells windows-1251 and KOI8-R from windows-1252). It returns the text and
// the name of the encoding used; charset.Decode also says how it was found.
func ToUTF8(body []byte, contentType string) ([]byte, string) {
	out, d := charset.Decode(body, contentType)
	return out, d.Name
}
