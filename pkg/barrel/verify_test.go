package barrel

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// verifyAfter opens the index in dir and verifies it: the error of either.
func verifyAfter(dir string) error {
	idx, err := Open(dir)
	if err != nil {
		return err
	}
	defer idx.Close()
	return idx.Verify()
}

// Verify checks every file the index relies on: each file emptied, and a
// bit flipped at each of several offsets of each file, is reported, naming
// the file; the undamaged copy verifies.
func TestVerifyFindsDamageInEveryFile(t *testing.T) {
	good := filepath.Join(t.TempDir(), "idx")
	b, err := NewBuilder(good, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 12 {
		page := fmt.Sprintf(`<html><head><title>Roses %d</title></head><body><p>growing roses in gravel, garden %d</p>
<a href="http://g.test/p%d.html">rose care %d</a> <a href="http://elsewhere.test/x%d">out</a></body></html>`, i, i, (i+1)%12, i, i)
		if err := b.Add(fmt.Sprintf("http://g.test/p%d.html", i), []byte(page)); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	b.Close()
	if err := verifyAfter(good); err != nil {
		t.Fatalf("undamaged index: %v", err)
	}
	ents, err := os.ReadDir(good)
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, e := range ents {
		name := e.Name()
		if name == "LOCK" || name == manifestName {
			continue
		}
		data, err := os.ReadFile(filepath.Join(good, name))
		if err != nil {
			t.Fatal(err)
		}
		damage := map[string][]byte{"emptied": {}}
		for _, at := range []int{0, len(data) / 3, len(data) / 2, len(data) - 1} {
			if at < 0 || at >= len(data) {
				continue
			}
			flipped := append([]byte(nil), data...)
			flipped[at] ^= 0x08
			damage[fmt.Sprintf("bit flip at byte %d", at)] = flipped
		}
		for what, bad := range damage {
			dir := filepath.Join(t.TempDir(), "idx")
			if err := os.CopyFS(dir, os.DirFS(good)); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, name), bad, 0o644); err != nil {
				t.Fatal(err)
			}
			err := verifyAfter(dir)
			switch {
			case err == nil:
				t.Errorf("%s %s: verify passes", name, what)
			case !strings.Contains(err.Error(), name) && !strings.Contains(err.Error(), strings.SplitN(name, "-", 2)[0]):
				t.Errorf("%s %s: error does not name the file: %v", name, what, err)
			}
			checked++
		}
	}
	if checked < 20 {
		t.Fatalf("only %d damaged copies checked", checked)
	}
}
