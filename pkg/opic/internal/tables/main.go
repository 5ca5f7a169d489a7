// Command tables prints the markdown tables of docs/opic.md: the error of
// OPIC after k visits per page for each crawl policy, and its online
// quality (top-100 overlap with PageRank), on a generated power-law graph
// and on the Python docs link graph:
//
//	go run ./pkg/opic/internal/tables
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"os"
	"strconv"

	"github.com/sekitei/crawlkit/pkg/opic"
	"github.com/sekitei/crawlkit/pkg/opic/internal/graphgen"
	"github.com/sekitei/crawlkit/pkg/opic/internal/ref"
)

var policies = []opic.Policy{opic.Greedy, opic.Random, opic.Cyclic}

func main() {
	n := flag.Int("n", 100_000, "pages of the power-law graph")
	m := flag.Int("m", 1_000_000, "links of the power-law graph")
	docs := flag.String("docs", "testdata/opic/pydocs.tsv", "the Python docs edge list")
	flag.Parse()
	graphs := []struct {
		name string
		s    *opic.State
	}{
		{fmt.Sprintf("power law, %d pages, %d links (seed 1)", *n, *m), powerLaw(*n, *m)},
		{"Python 3.11 docs, " + *docs, edgeList(*docs)},
	}
	w := bufio.NewWriter(os.Stdout)
	defer w.Flush()
	for _, g := range graphs {
		s := g.s
		pr := ref.PageRank(s, 0.85, 1e-12)
		fmt.Fprintf(w, "\n#### %s: %d pages, %d distinct links\n\n", g.name, s.Len(), s.Edges())
		fmt.Fprintf(w, "L1 distance to PageRank (d = 0.85) after k visits per page; in brackets the bound 1/|H|:\n\n")
		ks := []uint64{1, 2, 5, 10, 20, 50, 100, 200}
		fmt.Fprintf(w, "| k |")
		for _, p := range policies {
			fmt.Fprintf(w, " %s |", p)
		}
		fmt.Fprintf(w, "\n|---|---|---|---|\n")
		rows := make([][]string, len(ks))
		overlap := map[opic.Policy][]int{}
		to90 := map[opic.Policy]float64{}
		for _, p := range policies {
			s.Reset()
			for r, k := range ks {
				s.Run(p, opic.Stop{Steps: k*uint64(s.Len()) - s.Steps()}, 1)
				imp := s.Importance()
				rows[r] = append(rows[r], fmt.Sprintf("%.2e (%.1e)", ref.L1(imp, pr), s.ErrorBound()))
				if k <= 10 {
					overlap[p] = append(overlap[p], ref.Overlap(imp, pr, 100))
				}
			}
			// Visits per page until the top 100 shares 90 with PageRank's.
			s.Reset()
			step := uint64(max(s.Len()/100, 1))
			for s.Steps() < 100*uint64(s.Len()) && ref.Overlap(s.Importance(), pr, 100) < 90 {
				s.Run(p, opic.Stop{Steps: step}, 1)
			}
			to90[p] = float64(s.Steps()) / float64(s.Len())
		}
		for r, k := range ks {
			fmt.Fprintf(w, "| %d |", k)
			for _, c := range rows[r] {
				fmt.Fprintf(w, " %s |", c)
			}
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "\nTop-100 overlap with PageRank's top 100 after k visits per page, and the visits per page needed to reach 90:\n\n")
		fmt.Fprintf(w, "| policy | k=1 | k=2 | k=5 | k=10 | visits per page to 90 |\n|---|---|---|---|---|---|\n")
		for _, p := range policies {
			o := overlap[p]
			fmt.Fprintf(w, "| %s | %d | %d | %d | %d | %.2f |\n", p, o[0], o[1], o[2], o[3], to90[p])
		}
	}
}

func powerLaw(n, m int) *opic.State {
	src, dst := graphgen.PowerLaw(n, m, 1)
	s := opic.New(0.85)
	for i := range n {
		s.AddPage(strconv.AppendInt(nil, int64(i), 10))
	}
	for k := range src {
		s.AddLink(src[k], dst[k])
	}
	s.Compact()
	return s
}

func edgeList(path string) *opic.State {
	data, err := os.ReadFile(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, "tables:", err)
		os.Exit(1)
	}
	s := opic.New(0.85)
	for _, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		it, err := opic.ParseLine(line)
		if err != nil {
			fmt.Fprintln(os.Stderr, "tables:", err)
			os.Exit(1)
		}
		s.AddItem(it)
	}
	s.Compact()
	return s
}
