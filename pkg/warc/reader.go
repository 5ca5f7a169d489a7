package warc

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/klauspost/compress/gzip"
)

// Limits that keep a hostile file from exhausting memory.
const (
	maxHeaderLine  = 64 << 10 // one header line
	maxHeaderBytes = 1 << 20  // a record's whole header
)

// ErrFormat is wrapped by errors about malformed WARC data.
var ErrFormat = errors.New("malformed WARC")

// A Reader reads the records of a WARC stream, compressed with gzip (one
// member per record, or one for the whole stream) or not.
type Reader struct {
	cr   countingReader
	src  *bufio.Reader // the file's bytes; a flate.Reader, so gzip reads no further than it must
	gz   *gzip.Reader
	text *bufio.Reader // the uncompressed WARC text
	zip  bool

	member  int64 // offset of the current gzip member
	cur     int64 // offset of the last record returned; -1 before the first
	body    io.LimitedReader
	pending bool // body of the previous record not yet drained
	err     error

	rescanPrev bool // the damage may lie in the record before: rescan from it

	seeker io.Seeker    // the source, when it can go back to rescan damage
	probe  *gzip.Reader // tries candidate gzip members while resynchronising
}

type countingReader struct {
	r   io.Reader
	n   int64
	err error // the first failure of the source itself (not io.EOF)
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	if err != nil && err != io.EOF && c.err == nil {
		c.err = err
	}
	return n, err
}

// NewReader returns a Reader on r. Whether r is gzip-compressed is seen from
// its first bytes.
func NewReader(r io.Reader) (*Reader, error) {
	return newReaderAt(r, 0)
}

func newReaderAt(r io.Reader, base int64) (*Reader, error) {
	wr := &Reader{cur: -1}
	if s, ok := r.(io.Seeker); ok {
		wr.seeker = s
	}
	wr.cr = countingReader{r: r, n: base}
	wr.src = bufio.NewReaderSize(&wr.cr, 64<<10)
	magic, err := wr.src.Peek(2)
	if err != nil && err != io.EOF && err != bufio.ErrBufferFull {
		return nil, err
	}
	if len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		wr.zip = true
		wr.text = bufio.NewReaderSize(eofReader{}, 64<<10)
	} else {
		wr.text = wr.src
	}
	return wr, nil
}

type eofReader struct{}

func (eofReader) Read([]byte) (int, error) { return 0, io.EOF }

// pos is the offset in the underlying stream of the next unread byte.
func (r *Reader) pos() int64 { return r.cr.n - int64(r.src.Buffered()) }

// Next returns the next record, or io.EOF after the last one. The record's
// Body is valid until the next call; unread body bytes are skipped.
//
// A damaged record (a cut or corrupted block, a bad header, a broken gzip
// member) is returned as a *SkipError: the Reader has skipped to the next
// record start (the next "WARC/1." line of an uncompressed stream, the next
// gzip member that opens a record in a compressed one), and the following
// call returns that record. A source that is an io.Seeker (a file) is
// rescanned from just after the damaged record's start, so a record whose
// start was swallowed by a wrong length or a broken gzip member is still
// found. A failure of the source itself is returned as it is, and again on
// every later call.
func (r *Reader) Next() (*Record, error) {
	if r.err != nil {
		return nil, r.err
	}
	rec, err := r.next()
	if err == nil {
		r.cur = rec.Offset
		return rec, nil
	}
	var oe *OffsetError
	if r.cr.err != nil || !errors.As(err, &oe) {
		r.err = err
		return nil, err
	}
	from := oe.Offset
	if !r.zip && r.rescanPrev && r.cur >= 0 {
		// A record start was expected here: the record before may have
		// run long, over the start of the next one.
		from = r.cur
	}
	next, rerr := r.resync(from + 1)
	if rerr != nil {
		r.err = rerr
		return nil, rerr
	}
	if next < 0 {
		r.err = io.EOF
	}
	r.cur = -1
	return nil, &SkipError{Offset: oe.Offset, Next: next, Err: oe.Err}
}

// A SkipError reports a damaged record the Reader skipped.
type SkipError struct {
	Offset int64 // where the damage was found: the damaged record's start
	// Next is where reading resumes: the offset of the next record, or -1
	// when nothing readable follows. When a record's Content-Length ran
	// over the start of the next record, Next is before Offset.
	Next int64
	Err  error
}

func (e *SkipError) Error() string {
	if e.Next < 0 {
		return fmt.Sprintf("warc: damaged record at offset %d: %v; nothing readable after it", e.Offset, e.Err)
	}
	return fmt.Sprintf("warc: damaged record at offset %d: %v; reading resumes at offset %d", e.Offset, e.Err, e.Next)
}

func (e *SkipError) Unwrap() error { return &OffsetError{Offset: e.Offset, Err: e.Err} }

// resync moves to the first record start at or after from (rescanning
// from there when the source can seek, else going on from where reading
// stopped) and returns its offset, or -1 when the stream ends first.
func (r *Reader) resync(from int64) (int64, error) {
	r.pending = false
	r.rescanPrev = false
	if r.seeker != nil && from < r.cr.n {
		if _, err := r.seeker.Seek(from-r.cr.n, io.SeekCurrent); err != nil {
			return -1, fmt.Errorf("warc: %w", err)
		}
		r.cr.n = from
		r.src.Reset(&r.cr)
	}
	if r.zip {
		return r.findMember()
	}
	return r.findVersion()
}

// findVersion skips to the next line that starts with "WARC/1.".
func (r *Reader) findVersion() (int64, error) {
	for {
		_, err := r.src.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			continue
		}
		if err == io.EOF {
			return -1, nil
		}
		if err != nil {
			return -1, err
		}
		if b, _ := r.src.Peek(7); string(b) == "WARC/1." {
			return r.pos(), nil
		}
	}
}

// findMember skips to the next gzip member whose first bytes decompress to
// a version line.
func (r *Reader) findMember() (int64, error) {
	for {
		if r.src.Buffered() < 3 {
			if _, err := r.src.Peek(3); err == io.EOF || err == io.ErrUnexpectedEOF {
				return -1, nil
			} else if err != nil && err != bufio.ErrBufferFull {
				return -1, err
			}
		}
		buf, _ := r.src.Peek(r.src.Buffered())
		i := bytes.IndexByte(buf, 0x1f)
		if i < 0 {
			r.src.Discard(len(buf))
			continue
		}
		r.src.Discard(i)
		if r.opensRecord() {
			r.text.Reset(eofReader{}) // skipBlank starts the member
			return r.pos(), nil
		}
		r.src.Discard(1)
	}
}

// opensRecord tells whether the bytes ahead are a gzip member that starts
// with "WARC/", without consuming them.
func (r *Reader) opensRecord() bool {
	head, _ := r.src.Peek(r.src.Size())
	if len(head) < 3 || head[0] != 0x1f || head[1] != 0x8b || head[2] != 8 {
		return false
	}
	var err error
	if r.probe == nil {
		r.probe, err = gzip.NewReader(bytes.NewReader(head))
	} else {
		err = r.probe.Reset(bytes.NewReader(head))
	}
	if err != nil {
		return false
	}
	r.probe.Multistream(false)
	var v [5]byte
	_, err = io.ReadFull(r.probe, v[:])
	return err == nil && string(v[:]) == "WARC/"
}

func (r *Reader) next() (*Record, error) {
	if r.pending {
		if _, err := io.Copy(io.Discard, &r.body); err != nil {
			return nil, r.wrapAt(r.cur, err)
		}
		if r.body.N > 0 {
			return nil, r.wrapAt(r.cur, io.ErrUnexpectedEOF)
		}
		r.pending = false
	}
	// Skip the CRLFs closing the previous record and any stray blank lines.
	start, err := r.skipBlank()
	if err != nil {
		return nil, err
	}
	rec := &Record{Offset: start}
	line, err := r.readLine()
	if err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, r.wrapAt(start, err)
	}
	if !strings.HasPrefix(line, "WARC/") {
		r.rescanPrev = true
		return nil, r.wrapAt(start, fmt.Errorf("%w: version line %q", ErrFormat, clip(line)))
	}
	rec.Version = line
	size := len(line)
	for {
		line, err := r.readLine()
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return nil, r.wrapAt(start, err)
		}
		if line == "" {
			break
		}
		if size += len(line); size > maxHeaderBytes {
			return nil, r.wrapAt(start, fmt.Errorf("%w: header over %d bytes", ErrFormat, maxHeaderBytes))
		}
		if (line[0] == ' ' || line[0] == '\t') && len(rec.Header) > 0 {
			// A folded continuation line (WARC/1.0 allows them).
			last := &rec.Header[len(rec.Header)-1]
			last.Value += " " + strings.TrimSpace(line)
			continue
		}
		name, value, ok := strings.Cut(line, ":")
		if !ok || name == "" {
			return nil, r.wrapAt(start, fmt.Errorf("%w: header line %q", ErrFormat, clip(line)))
		}
		rec.Header = append(rec.Header, Field{strings.TrimSpace(name), strings.TrimSpace(value)})
	}
	n := rec.ContentLength()
	if n < 0 {
		return nil, r.wrapAt(start, fmt.Errorf("%w: missing or bad Content-Length %q", ErrFormat,
			clip(rec.Header.Get(FieldContentLength))))
	}
	r.body = io.LimitedReader{R: r.text, N: n}
	r.pending = true
	rec.Body = &bodyReader{r: r}
	return rec, nil
}

// bodyReader reports a block cut short as io.ErrUnexpectedEOF.
type bodyReader struct{ r *Reader }

func (b *bodyReader) Read(p []byte) (int, error) {
	n, err := b.r.body.Read(p)
	if err == io.EOF && b.r.body.N > 0 {
		err = io.ErrUnexpectedEOF
	}
	return n, err
}

// skipBlank skips CR and LF bytes, moving to the next gzip member when the
// current one ends, and returns the offset of the record that follows. It
// returns io.EOF at the clean end of the stream.
func (r *Reader) skipBlank() (int64, error) {
	for {
		var start int64
		if r.zip {
			start = r.member
		} else {
			start = r.pos()
		}
		c, err := r.text.ReadByte()
		if err == nil {
			if c == '\r' || c == '\n' {
				continue
			}
			r.text.UnreadByte()
			return start, nil
		}
		if err != io.EOF {
			return 0, r.wrap(err)
		}
		if !r.zip {
			return 0, io.EOF
		}
		// The member is used up: start the next one, if any.
		if _, perr := r.src.Peek(1); perr == io.EOF {
			return 0, io.EOF
		}
		r.member = r.pos()
		if r.gz == nil {
			r.gz, err = gzip.NewReader(r.src)
		} else {
			err = r.gz.Reset(r.src)
		}
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return 0, r.wrapAt(r.member, fmt.Errorf("gzip: %w", err))
		}
		r.gz.Multistream(false)
		r.text.Reset(r.gz)
	}
}

// readLine reads one line without its CRLF or LF.
func (r *Reader) readLine() (string, error) {
	var long []byte
	for {
		b, err := r.text.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			long = append(long, b...)
			if len(long) > maxHeaderLine {
				return "", fmt.Errorf("%w: header line over %d bytes", ErrFormat, maxHeaderLine)
			}
			continue
		}
		if err != nil {
			if err == io.EOF && len(b)+len(long) > 0 {
				err = io.ErrUnexpectedEOF
			}
			return "", err
		}
		if long != nil {
			b = append(long, b...)
		}
		b = bytes.TrimSuffix(b[:len(b)-1], []byte("\r"))
		return string(b), nil
	}
}

func (r *Reader) wrap(err error) error {
	if r.zip {
		return r.wrapAt(r.member, err)
	}
	return r.wrapAt(r.pos(), err)
}

func (r *Reader) wrapAt(off int64, err error) error {
	return &OffsetError{Offset: off, Err: err}
}

// An OffsetError is a read error at a record's offset.
type OffsetError struct {
	Offset int64
	Err    error
}

func (e *OffsetError) Error() string {
	return fmt.Sprintf("warc: record at offset %d: %v", e.Offset, e.Err)
}

func (e *OffsetError) Unwrap() error { return e.Err }

func clip(s string) string {
	if len(s) > 60 {
		return s[:60] + "..."
	}
	return s
}

// ReadAt reads the record that starts at offset in the file at path, as
// given by a Writer's Location or a fetch record's warc_file and
// warc_offset. The record's Body holds the whole content block in memory.
func ReadAt(path string, offset int64) (*Record, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return nil, err
	}
	r, err := newReaderAt(f, offset)
	if err != nil {
		return nil, err
	}
	rec, err := r.Next()
	if err == io.EOF {
		return nil, fmt.Errorf("warc: %s: no record at offset %d", path, offset)
	}
	if err != nil {
		return nil, err
	}
	body, err := io.ReadAll(rec.Body)
	if err != nil {
		return nil, err
	}
	rec.Body = bytes.NewReader(body)
	return rec, nil
}
