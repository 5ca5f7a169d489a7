package record

import (
	"bufio"
	"bytes"
	"fmt"
	"io"

	"github.com/klauspost/compress/gzip"
)

// gzipMagic starts every gzip member (RFC 1952): ID1, ID2 and the deflate
// method.
var gzipMagic = []byte{0x1f, 0x8b, 0x08}

// IsGzip reports whether data starts as a gzip file does.
func IsGzip(data []byte) bool { return bytes.HasPrefix(data, gzipMagic) }

// Decompressed returns r as the records it holds: a gzip stream (a
// records.ndjson.gz, told by its first bytes, not by a name) is read
// through a decompressor, anything else as it is. NDJSON never starts with
// the byte 0x1f, so no text input is taken for gzip. close releases the
// decompressor.
func Decompressed(r io.Reader) (_ io.Reader, close func(), err error) {
	br := bufio.NewReaderSize(r, 256<<10)
	head, perr := br.Peek(len(gzipMagic))
	if len(head) == 0 && perr != nil && perr != io.EOF {
		// A failing stream (or a terminal's stdin answered with the help)
		// fails here: read again, it would be asked a second time.
		return nil, func() {}, perr
	}
	if !IsGzip(head) {
		return br, func() {}, nil
	}
	zr, err := gzip.NewReader(br)
	if err != nil {
		return nil, func() {}, fmt.Errorf("gzip: %w", err)
	}
	return gzipErrors{zr}, func() { zr.Close() }, nil
}

// gzipErrors names gzip as the source of a read error (a torn or damaged
// .gz file).
type gzipErrors struct{ zr *gzip.Reader }

func (g gzipErrors) Read(p []byte) (int, error) {
	n, err := g.zr.Read(p)
	if err != nil && err != io.EOF {
		err = fmt.Errorf("gzip: %w", err)
	}
	return n, err
}
