package record

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// mountSmallTmpfs mounts a tmpfs of size bytes (the tests run as root).
func mountSmallTmpfs(t *testing.T, size int) string {
	t.Helper()
	mnt := t.TempDir()
	if err := unix.Mount("tmpfs", mnt, "tmpfs", 0, fmt.Sprintf("size=%d", size)); err != nil {
		t.Fatalf("mount tmpfs (the tests run as root): %v", err)
	}
	t.Cleanup(func() { unix.Unmount(mnt, unix.MNT_DETACH) })
	return mnt
}

// A Writer on a file of a disk that fills up fails with ENOSPC and leaves
// the file ending on a line boundary, every line whole; also when the file
// is opened for appending.
func TestWriterOnFullDiskEndsOnALine(t *testing.T) {
	for _, flags := range []int{os.O_CREATE | os.O_WRONLY | os.O_TRUNC, os.O_CREATE | os.O_WRONLY | os.O_APPEND} {
		mnt := mountSmallTmpfs(t, 256<<10)
		path := filepath.Join(mnt, "out.ndjson")
		f, err := os.OpenFile(path, flags, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		w := NewWriter(f)
		var werr error
		for i := 0; i < 100000 && werr == nil; i++ {
			r := New(fmt.Sprintf("http://x.test/%d", i))
			r.SetString("pad", "some text of a record that makes each line about a hundred bytes long")
			werr = w.Write(r)
		}
		if werr == nil {
			werr = w.Flush()
		}
		f.Close()
		if !errors.Is(werr, syscall.ENOSPC) {
			t.Fatalf("flags %x: want ENOSPC, got %v", flags, werr)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if len(data) == 0 || data[len(data)-1] != '\n' {
			t.Fatalf("flags %x: %d bytes, torn last line %q", flags, len(data), data[max(0, len(data)-40):])
		}
		for i, line := range bytes.Split(data[:len(data)-1], []byte{'\n'}) {
			r, err := Parse(line)
			if err != nil || r.URL() != fmt.Sprintf("http://x.test/%d", i) {
				t.Fatalf("flags %x: line %d: %q %v", flags, i+1, line, err)
			}
		}
	}
}
