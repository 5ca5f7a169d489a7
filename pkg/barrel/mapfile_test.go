package barrel

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// mappedNow reports whether the process maps path (/proc/self/maps).
func mappedNow(t *testing.T, path string) bool {
	t.Helper()
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Contains(maps, []byte(path))
}

// TestMapFile: a small file is read into memory (no mapping is left to
// unmap), a larger one mapped and unmapped by unmap; either holds the
// file's bytes, and a file of another size than the manifest's, or none,
// is reported as damage naming it.
func TestMapFile(t *testing.T) {
	dir := t.TempDir()
	for _, size := range []int{1, smallFile, smallFile + 1, 3 * smallFile} {
		path := filepath.Join(dir, "f"+strings.Repeat("x", size%7))
		want := bytes.Repeat([]byte("barrel!"), size/7+1)[:size]
		if err := os.WriteFile(path, want, 0o644); err != nil {
			t.Fatal(err)
		}
		b, err := mapFile(path, int64(size))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(b, want) {
			t.Fatalf("%d bytes: read other bytes", size)
		}
		if mapped := mappedNow(t, path); mapped != (size > smallFile) {
			t.Errorf("%d bytes: mapped %v, want %v", size, mapped, size > smallFile)
		}
		unmap(b)
		if mappedNow(t, path) {
			t.Errorf("%d bytes: still mapped after unmap", size)
		}
		if _, err := mapFile(path, int64(size+1)); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), filepath.Base(path)) {
			t.Errorf("%d bytes, manifest says one more: %v", size, err)
		}
		os.Remove(path)
	}
	if _, err := mapFile(filepath.Join(dir, "gone"), 10); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "gone: open ") {
		t.Errorf("a missing file: %v", err)
	}
}
