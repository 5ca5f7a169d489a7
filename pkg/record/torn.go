package record

import (
	"bytes"
	"fmt"
	"io"
	"os"
)

// CutTornLine truncates the record file at path after its last newline, so
// that a line cut short when its writer was killed or the disk filled does
// not stay in the file for good (Writer writes whole lines only, so such a
// tail is the only way a partial line gets in). It returns the bytes cut; a
// missing file is no error.
func CutTornLine(path string) (int64, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if os.IsNotExist(err) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	size := st.Size()
	end := size // the length to keep: just after the last newline
	buf := make([]byte, 64<<10)
	for end > 0 {
		n := int64(len(buf))
		if n > end {
			n = end
		}
		if _, err := f.ReadAt(buf[:n], end-n); err != nil && err != io.EOF {
			return 0, fmt.Errorf("%s: %w", path, err)
		}
		if i := bytes.LastIndexByte(buf[:n], '\n'); i >= 0 {
			end = end - n + int64(i) + 1
			break
		}
		end -= n
	}
	if end == size {
		return 0, nil
	}
	if err := f.Truncate(end); err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	return size - end, nil
}
