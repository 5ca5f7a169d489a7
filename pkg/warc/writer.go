package warc

import (
	"bytes"
	"crypto/sha1"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/klauspost/compress/gzip"
)

// Options configure a Writer.
type Options struct {
	// Dir is the directory of the WARC files; it is created if missing.
	Dir string
	// Prefix starts every file name: PREFIX-YYYYMMDDhhmmss-NNNNN.warc.gz.
	// Default "crawl".
	Prefix string
	// MaxSize rotates to a new file before a write would take the current
	// one past it (a write of records larger than MaxSize still goes into an
	// empty file). Default 1 GiB.
	MaxSize int64
	// Level is the gzip level, from gzip.BestSpeed (1) to gzip.BestCompression
	// (9); 0 means gzip.BestSpeed, which keeps a crawler's CPU for fetching.
	Level int
	// Info holds the fields of the warcinfo record opening each file
	// (software, operator, robots policy...), written as "name: value" lines.
	Info Header
	// Now returns the time for WARC-Date; default time.Now.
	Now func() time.Time
}

// A Location is where a written record landed.
type Location struct {
	File   string // the file's path: Options.Dir joined with its name
	Offset int64  // offset of the record's gzip member in the file
	Length int64  // compressed length of the member
}

// A Writer writes records to rotating gzip-per-record WARC files.
type Writer struct {
	opts Options
	pool sync.Pool // *encoder

	mu     sync.Mutex
	f      *os.File
	path   string
	size   int64
	serial int
	stamp  string
	files  []string
	err    error // sticky: after a failed write the file may be torn
	closed bool
}

// smallRecord is the size under which a record is Huffman-coded only.
const smallRecord = 2048

type encoder struct {
	buf   bytes.Buffer
	zw    *gzip.Writer
	small *gzip.Writer
	hdr   []byte
	blk   []byte
}

// Create returns a Writer on opts.Dir. No file is created before the first
// write.
func Create(opts Options) (*Writer, error) {
	if opts.Prefix == "" {
		opts.Prefix = "crawl"
	}
	if strings.ContainsAny(opts.Prefix, `/\`) {
		return nil, fmt.Errorf("warc: prefix %q contains a path separator", opts.Prefix)
	}
	if opts.MaxSize <= 0 {
		opts.MaxSize = 1 << 30
	}
	if opts.Level == 0 {
		opts.Level = gzip.BestSpeed
	}
	if opts.Level < gzip.BestSpeed || opts.Level > gzip.BestCompression {
		return nil, fmt.Errorf("warc: gzip level %d out of 1..9", opts.Level)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Dir == "" {
		opts.Dir = "."
	}
	if err := os.MkdirAll(opts.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("warc: %w", err)
	}
	w := &Writer{opts: opts}
	w.pool.New = func() any {
		zw, _ := gzip.NewWriterLevel(io.Discard, opts.Level)
		return &encoder{zw: zw}
	}
	return w, nil
}

// ErrClosed is returned by Write after Close.
var ErrClosed = errors.New("warc: writer closed")

// Write writes recs one after the other into the same file and returns
// their locations. It fills in WARC-Record-ID, WARC-Date, Content-Length and
// WARC-Block-Digest when missing; Body is read to its end.
func (w *Writer) Write(recs ...*Record) ([]Location, error) {
	encs := make([]*encoder, len(recs))
	defer func() {
		for _, e := range encs {
			if e != nil {
				if e.buf.Cap() > 8<<20 {
					continue // let a huge buffer go
				}
				w.pool.Put(e)
			}
		}
	}()
	var total int64
	for i, r := range recs {
		e := w.pool.Get().(*encoder)
		encs[i] = e
		if err := w.encode(e, r); err != nil {
			return nil, err
		}
		total += int64(e.buf.Len())
	}

	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil, ErrClosed
	}
	if w.err != nil {
		return nil, w.err
	}
	if w.f != nil && w.size > 0 && w.size+total > w.opts.MaxSize {
		if err := w.closeFile(); err != nil {
			w.err = err
			return nil, err
		}
	}
	if w.f == nil {
		if err := w.openFile(); err != nil {
			w.err = err
			return nil, err
		}
	}
	// One write for all: fewer system calls, and the records stay together.
	locs := make([]Location, len(recs))
	off := w.size
	for i, e := range encs {
		locs[i] = Location{File: w.path, Offset: off, Length: int64(e.buf.Len())}
		off += int64(e.buf.Len())
		if i > 0 {
			encs[0].buf.Write(e.buf.Bytes())
		}
	}
	if err := w.writeWhole(encs[0].buf.Bytes()); err != nil {
		w.err = err
		return nil, w.err
	}
	return locs, nil
}

// writeWhole appends b to the current file, or, when the write fails part
// way (a full disk), cuts what it wrote, so the file never ends in a torn
// gzip member.
func (w *Writer) writeWhole(b []byte) error {
	n, err := w.f.Write(b)
	if err == nil {
		w.size += int64(n)
		return nil
	}
	if n > 0 {
		if terr := w.f.Truncate(w.size); terr != nil {
			return fmt.Errorf("warc: %s: %w; and the torn record could not be cut: %v", w.path, err, terr)
		}
		if _, serr := w.f.Seek(w.size, io.SeekStart); serr != nil {
			return fmt.Errorf("warc: %s: %w; %v", w.path, err, serr)
		}
	}
	return fmt.Errorf("warc: %s: %w", w.path, err)
}

// Sync commits the records written so far to stable storage.
func (w *Writer) Sync() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil {
		return nil
	}
	if err := w.f.Sync(); err != nil {
		return fmt.Errorf("warc: %w", err)
	}
	return nil
}

// encode renders r as one gzip member into e.buf.
func (w *Writer) encode(e *encoder, r *Record) error {
	e.blk = e.blk[:0]
	if r.Body != nil {
		var err error
		e.blk, err = readAllInto(e.blk, r.Body)
		if err != nil {
			return fmt.Errorf("warc: reading record body: %w", err)
		}
	}
	h := r.Header
	if h.Get(FieldRecordID) == "" {
		h.Set(FieldRecordID, NewRecordID())
	}
	if h.Get(FieldDate) == "" {
		h.Set(FieldDate, FormatDate(w.opts.Now()))
	}
	h.Set(FieldContentLength, strconv.Itoa(len(e.blk)))
	if h.Get(FieldBlockDigest) == "" {
		h.Set(FieldBlockDigest, Digest(e.blk))
	}
	r.Header = h

	version := r.Version
	if version == "" {
		version = "WARC/1.1"
	}
	e.hdr = appendHeader(e.hdr[:0], version, h)
	e.buf.Reset()
	zw := e.zw
	if len(e.hdr)+len(e.blk) < smallRecord {
		// A small record (a request) does not repay building match
		// tables: Huffman coding alone is several times cheaper.
		if e.small == nil {
			e.small, _ = gzip.NewWriterLevel(io.Discard, gzip.HuffmanOnly)
		}
		zw = e.small
	}
	zw.Reset(&e.buf)
	zw.Write(e.hdr)
	zw.Write(e.blk)
	zw.Write([]byte("\r\n\r\n"))
	return zw.Close()
}

// appendHeader renders the version line and fields; CR and LF in names or
// values (from a hostile URL, say) become spaces so no field can be forged.
func appendHeader(b []byte, version string, h Header) []byte {
	b = append(b, version...)
	b = append(b, "\r\n"...)
	for _, f := range h {
		b = appendClean(b, f.Name)
		b = append(b, ": "...)
		b = appendClean(b, f.Value)
		b = append(b, "\r\n"...)
	}
	return append(b, "\r\n"...)
}

func appendClean(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\r' || c == '\n' {
			c = ' '
		}
		b = append(b, c)
	}
	return b
}

func readAllInto(b []byte, r io.Reader) ([]byte, error) {
	if br, ok := r.(interface{ Bytes() []byte }); ok { // *bytes.Buffer
		return append(b, br.Bytes()...), nil
	}
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
	}
}

// openFile creates the next file and writes its warcinfo record.
func (w *Writer) openFile() error {
	now := w.opts.Now().UTC()
	if w.stamp == "" {
		w.stamp = now.Format("20060102150405")
	}
	for tries := 0; ; tries++ {
		name := fmt.Sprintf("%s-%s-%05d.warc.gz", w.opts.Prefix, w.stamp, w.serial)
		w.serial++
		path := filepath.Join(w.opts.Dir, name)
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if errors.Is(err, os.ErrExist) && tries < 100000 {
			continue // another run in the same second: take the next serial
		}
		if err != nil {
			return fmt.Errorf("warc: %w", err)
		}
		w.f, w.path, w.size = f, path, 0
		w.files = append(w.files, path)
		break
	}
	info := &Record{Header: Header{
		{FieldType, TypeWarcinfo},
		{FieldDate, FormatDate(now)},
		{FieldFilename, filepath.Base(w.path)},
		{FieldContentType, "application/warc-fields"},
	}}
	var body bytes.Buffer
	for _, f := range w.opts.Info {
		body.Write(appendClean(nil, f.Name))
		body.WriteString(": ")
		body.Write(appendClean(nil, f.Value))
		body.WriteString("\r\n")
	}
	info.Body = &body
	e := w.pool.Get().(*encoder)
	defer w.pool.Put(e)
	if err := w.encode(e, info); err != nil {
		return err
	}
	return w.writeWhole(e.buf.Bytes())
}

func (w *Writer) closeFile() error {
	if w.f == nil {
		return nil
	}
	err := w.f.Sync()
	if cerr := w.f.Close(); err == nil {
		err = cerr
	}
	w.f = nil
	if err != nil {
		return fmt.Errorf("warc: %w", err)
	}
	return nil
}

// Files returns the paths of the files written so far, in order.
func (w *Writer) Files() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.files...)
}

// Close flushes and closes the current file. Every record written before
// Close is complete on disk.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil
	}
	w.closed = true
	return w.closeFile()
}

// BlockDigest is a helper for callers that stream a block: it returns the
// WARC digest of the concatenation of parts.
func BlockDigest(parts ...[]byte) string {
	h := sha1.New()
	for _, p := range parts {
		h.Write(p)
	}
	return DigestString(h.Sum(nil))
}
