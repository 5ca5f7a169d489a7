package barrel

import (
	"compress/flate"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"strings"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/gzip"

	"github.com/sekitei/crawlkit/pkg/warc"
)

// MaxPageBytes is the largest page body indexed.
const MaxPageBytes = 32 << 20

// ErrNotHTML is returned for a response that is not an HTML page.
var ErrNotHTML = errors.New("not an HTML page")

// PageFromWARC returns the page of a WARC response record: status 200, an
// HTML (or unlabelled) content type, Content-Encoding removed, with its
// Content-Type and X-Robots-Tag for the charset and robots decisions.
//
// A conversion record of text/html (the DOM fetch --render saw) is a page
// too: its block is the HTML.
func PageFromWARC(rec *warc.Record) (Page, error) {
	if rec.Type() == "conversion" && isHTML(rec.Header.Get("Content-Type")) {
		body, err := io.ReadAll(io.LimitReader(rec.Body, MaxPageBytes+1))
		if err != nil {
			return Page{}, fmt.Errorf("WARC conversion: %v", err)
		}
		if len(body) > MaxPageBytes {
			return Page{}, fmt.Errorf("page over %d bytes", MaxPageBytes)
		}
		return Page{URL: rec.TargetURI(), Body: body, ContentType: rec.Header.Get("Content-Type")}, nil
	}
	if rec.Type() != "response" {
		return Page{}, fmt.Errorf("WARC record is a %q, not a response", rec.Type())
	}
	resp, err := rec.HTTPResponse()
	if err != nil {
		return Page{}, fmt.Errorf("WARC response: %v", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return Page{}, fmt.Errorf("HTTP status %d", resp.StatusCode)
	}
	ct := resp.Header.Get("Content-Type")
	if !isHTML(ct) {
		return Page{}, ErrNotHTML
	}
	body, err := decodeBody(resp.Body, resp.Header.Get("Content-Encoding"))
	if err != nil {
		return Page{}, err
	}
	return Page{URL: rec.TargetURI(), Body: body, ContentType: ct, XRobotsTag: resp.Header.Values("X-Robots-Tag")}, nil
}

func isHTML(ct string) bool {
	if ct == "" {
		return true
	}
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && (mt == "text/html" || mt == "application/xhtml+xml")
}

func decodeBody(r io.Reader, enc string) ([]byte, error) {
	switch strings.ToLower(strings.TrimSpace(enc)) {
	case "", "identity":
	case "gzip", "x-gzip":
		zr, err := gzip.NewReader(r)
		if err != nil {
			return nil, fmt.Errorf("gzip body: %v", err)
		}
		defer zr.Close()
		r = zr
	case "deflate":
		r = flate.NewReader(r)
	case "br":
		r = brotli.NewReader(r)
	default:
		return nil, fmt.Errorf("unsupported Content-Encoding %q", enc)
	}
	body, err := io.ReadAll(io.LimitReader(r, MaxPageBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading body: %v", err)
	}
	if len(body) > MaxPageBytes {
		return nil, fmt.Errorf("page over %d bytes", MaxPageBytes)
	}
	return body, nil
}

// EachWARCPage calls fn for each HTML response of the WARC file at path;
// skip reports records that are not indexable pages, and damaged records
// (a *warc.SkipError), which are passed over: the records after them are
// still read. Revisit records are passed over too: a revisit has no
// payload, its page is the capture it refers to, indexed from that
// capture's response.
func EachWARCPage(path string, fn func(pg Page) error, skip func(off int64, err error)) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	r, err := warc.NewReader(f)
	if err != nil {
		return err
	}
	for {
		rec, err := r.Next()
		if err == io.EOF {
			return nil
		}
		var se *warc.SkipError
		if errors.As(err, &se) {
			if skip != nil {
				skip(se.Offset, err)
			}
			continue
		}
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if rec.Type() != "response" {
			continue
		}
		pg, err := PageFromWARC(rec)
		if err != nil {
			if skip != nil {
				skip(rec.Offset, err)
			}
			continue
		}
		if err := fn(pg); err != nil {
			return err
		}
	}
}

// WARCPageAt reads the page stored at offset of a WARC file, as named by a
// fetch record's warc_file and warc_offset.
func WARCPageAt(path string, offset int64) (Page, error) {
	rec, err := warc.ReadAt(path, offset)
	if err != nil {
		return Page{}, err
	}
	return PageFromWARC(rec)
}
