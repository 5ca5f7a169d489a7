package record

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCutTornLine(t *testing.T) {
	dir := t.TempDir()
	long := strings.Repeat("y", 200<<10) // longer than one read of the tail
	for _, c := range []struct{ in, want string }{
		{"", ""},
		{"{\"url\":\"a\"}\n", "{\"url\":\"a\"}\n"},
		{"{\"url\":\"a\"}\n{\"url\":\"b", "{\"url\":\"a\"}\n"},
		{"{\"url\":\"a\"}\n" + long, "{\"url\":\"a\"}\n"},
		{long + "\n{\"u", long + "\n"},
		{"no newline at all", ""},
	} {
		p := filepath.Join(dir, "f.ndjson")
		os.WriteFile(p, []byte(c.in), 0o644)
		n, err := CutTornLine(p)
		got, _ := os.ReadFile(p)
		if err != nil || string(got) != c.want || n != int64(len(c.in)-len(c.want)) {
			t.Errorf("%.20q: kept %d bytes (cut %d, %v), want %d", c.in, len(got), n, err, len(c.want))
		}
	}
	if n, err := CutTornLine(filepath.Join(dir, "missing")); n != 0 || err != nil {
		t.Errorf("missing file: %d %v", n, err)
	}
}
