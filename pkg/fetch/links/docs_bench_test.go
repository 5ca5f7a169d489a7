package links

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/sekitei/crawlkit/pkg/textsig"
)

// The Python documentation (Debian's python3.11-doc, scripts/deps.sh):
// 530 real pages, span-heavy. The Docs*Scan benchmarks leave out link
// resolution, which both share.
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

func BenchmarkDocsScannerScan(b *testing.B) {
	pages := loadDocs(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		e, _ := newExtractor("http://docs.test/library/x.html", Options{})
		e.scan(pages[i%len(pages)])
	}
}

func BenchmarkDocsTokenizerScan(b *testing.B) {
	pages := loadDocs(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		e, _ := newExtractor("http://docs.test/library/x.html", Options{})
		tokenize(e, pages[i%len(pages)])
	}
}

// The one pass (links and signature) against the two passes fetch made
// before: the scan, then textsig.Signature with the x/net/html tokenizer.
func BenchmarkDocsOnePass(b *testing.B) {
	pages := loadDocs(b)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		Extract(pages[i%len(pages)], "http://docs.test/library/x.html", Options{Signature: true})
	}
}

func BenchmarkDocsTwoPasses(b *testing.B) {
	pages := loadDocs(b)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		Extract(pages[i%len(pages)], "http://docs.test/library/x.html", Options{})
		textsig.Signature(pages[i%len(pages)])
	}
}
