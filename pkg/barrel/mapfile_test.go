package barrel

import (
	"bytes"
	"errors"
	"fmt"
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
	if _, err := openTable(dir, "gone.tab", FileSum{Size: 10}); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "gone.tab: open ") {
		t.Errorf("a missing table: %v", err)
	}
}

// TestManifestDamaged: a manifest that does not decode is reported as
// damage with its path and encoding/json's one-line message, whichever
// decoder refused it.
func TestManifestDamaged(t *testing.T) {
	dir := t.TempDir()
	build(t, dir, Options{}, map[string]string{"http://a.test/": "<title>one</title><p>a page of words"})
	raw, err := os.ReadFile(filepath.Join(dir, manifestName))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Open(dir); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, body, want string }{
		{"cut in half", string(raw[:len(raw)/2]), "unexpected end of JSON input"},
		{"a string for the format", strings.Replace(string(raw), `"format": `, `"format": "x`, 1), "invalid character"},
		{"the format a string", strings.Replace(string(raw), fmt.Sprintf(`"format": %d`, formatNumber), fmt.Sprintf(`"format": "%d"`, formatNumber), 1), "json: cannot unmarshal string into Go struct field Manifest.format of type int"},
	} {
		if err := os.WriteFile(filepath.Join(dir, manifestName), []byte(c.body), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Open(dir)
		if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), filepath.Join(dir, manifestName)+": "+c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}
