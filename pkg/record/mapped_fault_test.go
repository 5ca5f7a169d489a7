//go:build unix

package record

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestGuardMappedTruncated maps a file, truncates it as another process
// could, and reads the mapped bytes past the new end: an error, not a
// SIGBUS that kills the test binary.
func TestGuardMappedTruncated(t *testing.T) {
	name := filepath.Join(t.TempDir(), "pages.ndjson")
	line := []byte(`{"url":"http://a.test/","weight":1}` + "\n")
	var content []byte
	for len(content) < 1<<20 {
		content = append(content, line...)
	}
	if err := os.WriteFile(name, content, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	data, release, err := ReadWhole(f)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	if len(data) != len(content) {
		t.Fatalf("%d bytes mapped, want %d", len(data), len(content))
	}
	sum := 0
	if err := GuardMapped(func() { sum += int(data[len(data)-1]) }); err != nil || sum != '\n' {
		t.Fatalf("whole file: %v, last byte %d", err, sum)
	}
	if err := os.Truncate(name, 0); err != nil {
		t.Fatal(err)
	}
	err = GuardMapped(func() { sum += int(data[len(data)-1]) })
	if !errors.Is(err, ErrInputChanged) {
		t.Fatalf("read past the truncated end: %v", err)
	}
}
