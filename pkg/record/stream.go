package record

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
)

// DefaultMaxLine is the longest line a record may be, in bytes, unless a
// tool is told otherwise (--max-line): a longer line is reported as a bad
// line and skipped, read through without being held, so that one huge
// line cannot make a tool's memory grow with it.
const DefaultMaxLine = 16 << 20

// A LineTooLongError is a line longer than the reader's maximum; the line
// was skipped.
type LineTooLongError struct {
	Len, Max int
}

func (e *LineTooLongError) Error() string {
	return fmt.Sprintf("a line of %d bytes, longer than a record may be (%d bytes; --max-line raises it): skipped", e.Len, e.Max)
}

// LineReader reads lines up to a maximum length (DefaultMaxLine, or
// SetMax's). It strips the newline, a trailing carriage return and, on
// the first line, a UTF-8 byte order mark. A longer line is returned as a
// *LineTooLongError with its number, and reading goes on after it.
type LineReader struct {
	br   *bufio.Reader
	long []byte // holds a line that did not fit the bufio buffer
	line int
	max  int
	// data is the input not yet read, for a reader over memory.
	data     []byte
	inMemory bool
}

// NewLineReader returns a LineReader reading from r.
func NewLineReader(r io.Reader) *LineReader {
	return &LineReader{br: bufio.NewReaderSize(r, 256<<10), max: DefaultMaxLine}
}

// SetMax sets the longest line the reader returns, in bytes (without its
// newline); 0 or less means DefaultMaxLine.
func (lr *LineReader) SetMax(n int) {
	if n <= 0 {
		n = DefaultMaxLine
	}
	lr.max = n
}

// tooLong counts a skipped line of n bytes, its newline included if any,
// and returns its error.
func (lr *LineReader) tooLong(n int, nl bool) ([]byte, int, error) {
	lr.line++
	if nl {
		n--
	}
	return nil, lr.line, &LineTooLongError{Len: n, Max: lr.max}
}

// Next returns the next line and its 1-based number. The slice is valid until
// the next call. At the end of input it returns io.EOF.
func (lr *LineReader) Next() ([]byte, int, error) {
	if lr.inMemory {
		return lr.nextInMemory()
	}
	b, err := lr.br.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		lr.long = append(lr.long[:0], b...)
		for err == bufio.ErrBufferFull {
			b, err = lr.br.ReadSlice('\n')
			if len(lr.long)+len(b) > lr.max+2 { // the line, and "\r\n"
				// Too long: read through the rest of it, holding nothing.
				n := len(lr.long) + len(b)
				for err == bufio.ErrBufferFull {
					b, err = lr.br.ReadSlice('\n')
					n += len(b)
				}
				lr.long = nil
				if err != nil && err != io.EOF {
					return nil, lr.line, err
				}
				return lr.tooLong(n, err == nil)
			}
			lr.long = append(lr.long, b...)
		}
		b = lr.long
	}
	if err != nil && err != io.EOF {
		return nil, lr.line, err
	}
	if err == io.EOF && len(b) == 0 {
		return nil, lr.line, io.EOF
	}
	if b = bytes.TrimSuffix(b, []byte("\n")); len(b) > lr.max && len(bytes.TrimSuffix(b, []byte("\r"))) > lr.max {
		return lr.tooLong(len(b), false)
	}
	b = lr.trim(b)
	// Do not keep a huge buffer alive after a huge line.
	if cap(lr.long) > 16<<20 && len(b) < 1<<20 {
		lr.long = nil
	}
	return b, lr.line, nil
}

// trim counts a line read without its newline and strips a trailing
// carriage return and, on the first line, a byte order mark.
func (lr *LineReader) trim(b []byte) []byte {
	lr.line++
	b = bytes.TrimSuffix(b, []byte("\r"))
	if lr.line == 1 {
		b = bytes.TrimPrefix(b, []byte("\xEF\xBB\xBF"))
	}
	return b
}

// A DataError is a problem with one input record: the tool reports it and
// goes on, unless it runs with --strict.
type DataError struct {
	Line int
	Err  error
}

func (e *DataError) Error() string { return fmt.Sprintf("line %d: %v", e.Line, e.Err) }
func (e *DataError) Unwrap() error { return e.Err }

// Errorf returns a DataError for the record's line.
func (r *Record) Errorf(format string, args ...any) error {
	return &DataError{Line: r.Line, Err: fmt.Errorf(format, args...)}
}

// ErrStrict is returned by Input.Each when a data error stopped the run.
var ErrStrict = errors.New("stopped at a bad record (--strict)")

// Input reads records from the files named on the command line, or from
// standard input, reports bad lines and applies sharding.
type Input struct {
	Tool   string    // prefix of error messages
	Strict bool      // a bad line stops the run
	Stderr io.Writer // where bad lines are reported
	Stdin  io.Reader // read when no files are named or for "-"
	Shard  Shard     // keep only records of this shard; zero keeps all

	// Reuse makes Each hand fn the same Record for every line, its buffers
	// reused, so that reading costs no allocation per record. fn must then
	// keep neither the record nor a slice from Raw past its return; strings
	// from URL, String and Decode are its own and may be kept.
	Reuse bool

	// MaxLine is the longest line read as a record, in bytes (0:
	// DefaultMaxLine); a longer one is reported as bad and skipped.
	MaxLine int

	// Bad counts the bad lines seen so far.
	Bad int
	// Counted is called after each line with the bytes read, for progress.
	Counted func(n int)
}

// Each calls fn for every record of every input in order. fn may return a
// DataError (see Record.Errorf; one without a line gets the record's) to
// report its record as bad. Each stops on an I/O error, a non-data error
// from fn, a cancelled ctx, or the first bad record under Strict.
func (in *Input) Each(ctx context.Context, files []string, fn func(*Record) error) error {
	var shared *Record
	if in.Reuse {
		shared = &Record{}
	}
	return in.EachLine(ctx, files, func(name string, line []byte, n int) error {
		rec := shared
		if rec == nil {
			rec = &Record{}
		}
		var err error
		if in.Reuse {
			// The line stays as read until fn returns, and under Reuse fn
			// keeps nothing of the record: no copy of it is needed.
			err = ParseView(rec, line)
		} else {
			rec.reset()
			err = rec.parseLine(line, false)
		}
		if err != nil {
			return &DataError{Line: n, Err: err}
		}
		rec.Line = n
		if !in.Shard.Keeps(rec) {
			return nil
		}
		return fn(rec)
	})
}

// EachLine is Each for tools with a line format of their own (TSV edge lists):
// fn sees every non-blank line. Errors are handled as in Each.
func (in *Input) EachLine(ctx context.Context, files []string, fn func(name string, line []byte, n int) error) error {
	if len(files) == 0 {
		files = []string{"-"}
	}
	for _, name := range files {
		if err := in.eachIn(ctx, name, fn); err != nil {
			return err
		}
	}
	return nil
}

func (in *Input) eachIn(ctx context.Context, name string, fn func(string, []byte, int) error) error {
	var r io.Reader
	if name == "-" {
		r = in.Stdin
		if r == nil {
			r = os.Stdin
		}
	} else if IsURLArg(name) {
		r = strings.NewReader(name + "\n")
	} else {
		f, err := os.Open(name)
		if err != nil {
			return err
		}
		defer f.Close()
		r = f
	}
	r, closeGz, err := Decompressed(r)
	if err != nil {
		return fmt.Errorf("%s: %w", displayName(name), err)
	}
	defer closeGz()
	lr := NewLineReader(r)
	lr.SetMax(in.MaxLine)
	return in.eachLineOf(ctx, name, lr, fn)
}

func (in *Input) eachLineOf(ctx context.Context, name string, lr *LineReader, fn func(string, []byte, int) error) error {
	done := ctx.Done() // polled, not ctx.Err(): that takes a lock per line
	for {
		select {
		case <-done:
			return ctx.Err()
		default:
		}
		line, n, err := lr.Next()
		if err != nil {
			// Only here: errors.As takes its target's address, which
			// would cost an allocation on every line.
			if err == io.EOF {
				return nil
			}
			var tl *LineTooLongError
			if !errors.As(err, &tl) {
				return fmt.Errorf("%s: %w", displayName(name), err)
			}
			if in.Counted != nil {
				in.Counted(tl.Len + 1)
			}
			if rerr := in.Report(name, &DataError{Line: n, Err: tl}); rerr != nil {
				return rerr
			}
			continue
		}
		if in.Counted != nil {
			in.Counted(len(line) + 1)
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		if err := fn(name, line, n); err != nil {
			var de *DataError
			if !errors.As(err, &de) {
				return err
			}
			if de.Line == 0 {
				de.Line = n
			}
			if rerr := in.Report(name, de); rerr != nil {
				return rerr
			}
		}
	}
}

// Report prints a data error as "TOOL: line N: what" (with the file name
// when reading a named file) and returns ErrStrict under Strict.
func (in *Input) Report(name string, de *DataError) error {
	in.Bad++
	w := in.Stderr
	if w == nil {
		w = os.Stderr
	}
	where := ""
	if name != "" && name != "-" {
		where = name + ": "
	}
	fmt.Fprintf(w, "%s: %sline %d: %v\n", in.Tool, where, de.Line, de.Err)
	if in.Strict {
		return ErrStrict
	}
	return nil
}

func displayName(name string) string {
	if name == "-" {
		return "stdin"
	}
	return name
}

// Writer writes whole lines to an underlying writer through a buffer. It
// never writes part of a line, so output cut short by a signal or a full
// disk ends on a line boundary. It is safe for concurrent use.
type Writer struct {
	mu  sync.Mutex
	w   io.Writer
	buf []byte
	// LineBuffered makes every line go out as soon as it is complete.
	LineBuffered bool
	err          error
}

// NewWriter returns a Writer on w.
func NewWriter(w io.Writer) *Writer {
	return &Writer{w: w, buf: make([]byte, 0, 64<<10)}
}

const flushAt = 60 << 10

// Write writes one record as a JSON line.
func (w *Writer) Write(r *Record) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = r.AppendJSON(w.buf)
	w.buf = append(w.buf, '\n')
	return w.maybeFlush()
}

// WriteLine writes line followed by a newline; line must not contain one.
func (w *Writer) WriteLine(line []byte) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, line...)
	w.buf = append(w.buf, '\n')
	return w.maybeFlush()
}

// AppendLine lets the caller build a line in place: fn appends to the buffer
// and Writer adds the newline. It avoids a copy on hot paths.
func (w *Writer) AppendLine(fn func([]byte) []byte) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = fn(w.buf)
	w.buf = append(w.buf, '\n')
	return w.maybeFlush()
}

// TryAppendLine is AppendLine for a builder that may fail: if fn returns
// an error, nothing of the line is written and the error is returned.
func (w *Writer) TryAppendLine(fn func([]byte) ([]byte, error)) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	start := len(w.buf)
	b, err := fn(w.buf)
	if err != nil {
		w.buf = w.buf[:start]
		return err
	}
	w.buf = append(b, '\n')
	return w.maybeFlush()
}

func (w *Writer) maybeFlush() error {
	if w.LineBuffered || len(w.buf) >= flushAt {
		return w.flush()
	}
	return w.err
}

// cutShortWrite undoes the part of a line a short write (a full disk) left
// at the end of a regular file, so the file ends on a line boundary. Output
// to a pipe or terminal cannot be taken back, and a full disk does not
// shorten writes to them.
func cutShortWrite(out io.Writer, written []byte, werr error) error {
	f, ok := out.(*os.File)
	if !ok {
		return werr
	}
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		return werr
	}
	torn := int64(len(written) - (bytes.LastIndexByte(written, '\n') + 1))
	if torn == 0 {
		return werr
	}
	end, err := f.Seek(0, io.SeekCurrent)
	if err == nil {
		err = f.Truncate(end - torn)
	}
	if err == nil {
		_, err = f.Seek(end-torn, io.SeekStart)
	}
	if err != nil {
		return fmt.Errorf("%w; and the torn last line could not be cut: %v", werr, err)
	}
	return werr
}

// Flush writes out every buffered line.
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.flush()
}

func (w *Writer) flush() error {
	if w.err != nil {
		return w.err
	}
	if len(w.buf) == 0 {
		return nil
	}
	n, err := w.w.Write(w.buf)
	if err != nil && n > 0 && n < len(w.buf) {
		err = cutShortWrite(w.w, w.buf[:n], err)
	}
	w.buf = w.buf[:0]
	if cap(w.buf) > 4<<20 {
		w.buf = make([]byte, 0, 64<<10)
	}
	w.err = err
	return err
}

// IsURLArg reports whether a command-line argument is an http(s) URL,
// which a tool reads as a URL record rather than as a file name.
func IsURLArg(arg string) bool {
	lower := strings.ToLower(arg)
	return strings.HasPrefix(lower, "http://") || strings.HasPrefix(lower, "https://")
}
