package opic_test

import (
	"bytes"
	"os"
	"strconv"
	"testing"

	"github.com/sekitei/crawlkit/pkg/opic"
	"github.com/sekitei/crawlkit/pkg/opic/internal/graphgen"
	"github.com/sekitei/crawlkit/pkg/opic/internal/ref"
)

// powerLawState builds a state on a generated power-law graph whose page i
// is named "i".
func powerLawState(t testing.TB, n, m int, seed uint64) *opic.State {
	t.Helper()
	src, dst := graphgen.PowerLaw(n, m, seed)
	s := opic.New(0.85)
	var buf []byte
	for i := range n {
		buf = strconv.AppendInt(buf[:0], int64(i), 10)
		if id := s.AddPage(buf); id != uint32(i) {
			t.Fatalf("page %d got id %d", i, id)
		}
	}
	for k := range src {
		s.AddLink(src[k], dst[k])
	}
	s.Compact()
	s.Reset()
	return s
}

// pagerank is gonum's PageRankSparse of the state's graph.
func pagerank(s *opic.State, d float64) []float64 { return ref.PageRank(s, d, 1e-12) }

// loadEdges builds a state from an edge-list file through ParseLine, as the
// tool reads it.
func loadEdges(t testing.TB, path string) *opic.State {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := opic.New(0.85)
	for n, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		it, err := opic.ParseLine(line)
		if err != nil {
			t.Fatalf("%s: line %d: %v", path, n+1, err)
		}
		s.AddItem(it)
	}
	s.Compact()
	s.Reset()
	return s
}
