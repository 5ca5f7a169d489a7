//go:build unix

package record

import (
	"os"

	"golang.org/x/sys/unix"
)

// mapFile maps the first size bytes of f read-only.
func mapFile(f *os.File, size int64) ([]byte, func(), error) {
	data, err := unix.Mmap(int(f.Fd()), 0, int(size), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, nil, err
	}
	// The tool reads it once from start to end (twice at most).
	_ = unix.Madvise(data, unix.MADV_SEQUENTIAL)
	return data, func() { unix.Munmap(data) }, nil
}
