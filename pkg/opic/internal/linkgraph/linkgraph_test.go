package linkgraph

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func TestWalk(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{
		"index.html":     `<html><body><a href="a.html">A</a> <A HREF="sub/b.html#part">B</A> <a href="https://python.org/">out</a> <a href="#top">self</a> <a>no href</a></body></html>`,
		"a.html":         `<a href="index.html?x=1">home</a><a href="a.html">me</a><a href="missing.html">gone</a><a href="a.html">me again</a>`,
		"sub/b.html":     `<p><a href="../index.html">up</a><a href="./">dir</a><a href="../../etc/passwd">escape</a></p>`,
		"sub/index.html": `<a href="b.html">b</a>`,
		"notes.txt":      `<a href="index.html">not html</a>`,
	}
	for name, body := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	edges, err := Walk(root)
	if err != nil {
		t.Fatal(err)
	}
	want := []Edge{
		{"a.html", "a.html"}, {"a.html", "a.html"}, {"a.html", "index.html"},
		{"index.html", "a.html"}, {"index.html", "sub/b.html"},
		{"sub/b.html", "index.html"}, {"sub/b.html", "sub/index.html"},
		{"sub/index.html", "sub/b.html"},
	}
	if !reflect.DeepEqual(edges, want) {
		t.Errorf("edges\n%v\nwant\n%v", edges, want)
	}
}
