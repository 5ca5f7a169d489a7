package testreport

import (
	"os"
	"path/filepath"
	"testing"
)

func TestLogfAppendsToTheReport(t *testing.T) {
	path := filepath.Join(t.TempDir(), "report")
	t.Setenv(Env, path)
	Logf(t, "kills %d", 3)
	Logf(t, "orphans %d", 0)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := "TestLogfAppendsToTheReport: kills 3\nTestLogfAppendsToTheReport: orphans 0\n"
	if string(b) != want {
		t.Fatalf("report %q, want %q", b, want)
	}
}
