package warc

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
)

// CutTornTail truncates a WARC file written by a Writer (one gzip member a
// record) to the end of its last whole record, when what follows is a torn
// record and nothing else: the tail a writer leaves when it is killed, or
// when the disk fills, in the middle of a record. It returns the number of
// bytes cut (0 for a file that reads to its end). A file that is damaged
// before its tail (a bad record followed by a good one) is not touched: it
// returns an error, since cutting there would lose good records.
func CutTornTail(path string) (int64, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	r, err := NewReader(f)
	if err != nil {
		return 0, err
	}
	if !r.zip && st.Size() > 0 {
		return 0, fmt.Errorf("warc: %s: not gzip-compressed per record: a torn tail cannot be told apart", path)
	}
	// bad is the offset of the first record that does not read whole.
	var bad int64
	for {
		rec, err := r.Next()
		if err == io.EOF {
			return 0, nil
		}
		var oe *OffsetError
		if err != nil {
			if !errors.As(err, &oe) {
				return 0, fmt.Errorf("warc: %s: %w", path, err)
			}
			bad = oe.Offset
			break
		}
		if _, err := io.Copy(io.Discard, rec.Body); err != nil {
			bad = rec.Offset
			break
		}
	}
	if next := nextMember(f, bad+1, st.Size()); next >= 0 {
		return 0, fmt.Errorf("warc: %s: damaged record at offset %d with more data after it (offset %d): not a torn tail, left as it is", path, bad, next)
	}
	if err := f.Truncate(bad); err != nil {
		return 0, fmt.Errorf("warc: %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		return 0, fmt.Errorf("warc: %s: %w", path, err)
	}
	return st.Size() - bad, nil
}

// nextMember returns the offset of the first gzip member header at or after
// from that starts a readable record, or -1.
func nextMember(f *os.File, from, size int64) int64 {
	magic := []byte{0x1f, 0x8b, 0x08}
	buf := make([]byte, 64<<10)
	for off := from; off < size; {
		n, err := f.ReadAt(buf, off)
		if n < len(magic) {
			return -1
		}
		chunk := buf[:n]
		for i := 0; ; {
			j := bytes.Index(chunk[i:], magic)
			if j < 0 {
				break
			}
			at := off + int64(i+j)
			if _, rerr := ReadAt(f.Name(), at); rerr == nil {
				return at
			}
			i += j + 1
		}
		if err != nil {
			return -1
		}
		// Overlap so a header split across reads is still found.
		off += int64(n - len(magic) + 1)
	}
	return -1
}
