package record

import (
	"fmt"
	"testing"
)

// BenchmarkParsePage parses a typical page record and reads three fields, the
// per-record cost every tool pays.
func BenchmarkParsePage(b *testing.B) {
	lines := make([][]byte, 1000)
	for i := range lines {
		lines[i] = []byte(fmt.Sprintf(`{"url":"https://host%d.example/page/%d","weight":%d.5,"change_rate":0.%d,"last_fetch":"2026-11-20T00:00:00Z"}`, i%100, i, i%7, i%9+1))
	}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		r, err := Parse(lines[i%len(lines)])
		if err != nil {
			b.Fatal(err)
		}
		r.Float("weight")
		r.Float("change_rate")
		r.Time("last_fetch")
	}
}
