package record

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"

	"github.com/klauspost/compress/gzip"
)

// ReadWhole returns the rest of f's content (from its current offset) in
// memory, for a tool that reads its input twice or keeps views of it: a
// regular file is mapped read-only, so that nothing is copied and the
// page cache holds the bytes; anything else (a pipe) is read into a
// buffer. release unmaps; the data must not be used after it.
func ReadWhole(f *os.File) (data []byte, release func(), err error) {
	data, release, err = readWhole(f)
	if err != nil || !IsGzip(data) {
		return data, release, err
	}
	// A gzip file (records.ndjson.gz) is read as what it holds.
	defer release()
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, func() {}, fmt.Errorf("%s: %w", f.Name(), err)
	}
	defer zr.Close()
	data, err = io.ReadAll(zr)
	if err != nil {
		return nil, func() {}, fmt.Errorf("%s: gzip: %w", f.Name(), err)
	}
	return data, func() {}, nil
}

func readWhole(f *os.File) (data []byte, release func(), err error) {
	if st, serr := f.Stat(); serr == nil && st.Mode().IsRegular() {
		if off, serr := f.Seek(0, io.SeekCurrent); serr == nil {
			if st.Size() <= off {
				return nil, func() {}, nil
			}
			if data, release, merr := mapFile(f, st.Size()); merr == nil {
				// Consumed, as if read: a later reader of f starts after it.
				f.Seek(0, io.SeekEnd)
				return data[off:], release, nil
			}
		}
	}
	data, err = io.ReadAll(f)
	return data, func() {}, err
}

// NewBytesLineReader returns a LineReader over data held in memory: its
// lines are slices of data, not copies.
func NewBytesLineReader(data []byte) *LineReader {
	return &LineReader{data: data, inMemory: true, max: DefaultMaxLine}
}

// nextInMemory is Next for a reader over data held in memory.
func (lr *LineReader) nextInMemory() ([]byte, int, error) {
	if len(lr.data) == 0 {
		return nil, lr.line, io.EOF
	}
	b := lr.data
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		b, lr.data = b[:i], b[i+1:]
	} else {
		lr.data = nil
	}
	if len(b) > lr.max && len(bytes.TrimSuffix(b, []byte("\r"))) > lr.max {
		return lr.tooLong(len(b), false)
	}
	return lr.trim(b), lr.line, nil
}

// EachLineIn is EachLine over one input already in memory (see
// ReadWhole), named name in messages ("-" for standard input): fn's lines
// are slices of data.
func (in *Input) EachLineIn(ctx context.Context, name string, data []byte, fn func(name string, line []byte, n int) error) error {
	lr := NewBytesLineReader(data)
	lr.SetMax(in.MaxLine)
	return in.eachLineOf(ctx, name, lr, fn)
}

// EstimateLines guesses the number of lines in data from its first
// megabyte, a little high, to size what a tool keeps per line without
// counting them all.
func EstimateLines(data []byte) int {
	const sample = 1 << 20
	if len(data) <= sample {
		return bytes.Count(data, []byte{'\n'}) + 1
	}
	n := bytes.Count(data[:sample], []byte{'\n'}) + 1
	return int(float64(n)*float64(len(data))/sample*1.05) + 16
}

// ErrInputChanged is the error of a mapped input that shrank while a tool
// read it: another process truncated the file.
var ErrInputChanged = errors.New("the input file shrank while it was read (truncated by another process?)")

// GuardMapped runs fn, which reads input mapped by ReadWhole, on the
// calling goroutine, and turns the fault of a mapped file truncated under
// it into ErrInputChanged: without this, touching the mapped pages past the
// file's new end kills the process with SIGBUS. fn must read the mapped
// data on this goroutine only (the guard is per goroutine).
func GuardMapped(fn func()) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			if re, ok := r.(runtime.Error); ok {
				if _, fault := re.(interface{ Addr() uintptr }); fault {
					err = ErrInputChanged
					return
				}
			}
			panic(r)
		}
	}()
	fn()
	return nil
}
