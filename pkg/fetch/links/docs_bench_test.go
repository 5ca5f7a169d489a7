package links

import (
	"os"
	"path/filepath"
	"testing"
)

func loadDocs(b *testing.B) [][]byte {
	var pages [][]byte
	filepath.WalkDir("/usr/share/doc/python3.11/html", func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && filepath.Ext(p) == ".html" {
			if body, err := os.ReadFile(p); err == nil {
				pages = append(pages, body)
			}
		}
		return nil
	})
	if len(pages) < 500 {
		b.Fatalf("%d pages", len(pages))
	}
	return pages
}

func BenchmarkDocsScanner(b *testing.B) {
	pages := loadDocs(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		Extract(pages[i%len(pages)], "http://docs.test/library/x.html", Options{})
	}
}

func BenchmarkDocsTokenizer(b *testing.B) {
	pages := loadDocs(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		extractRef(pages[i%len(pages)], "http://docs.test/library/x.html", Options{})
	}
}
