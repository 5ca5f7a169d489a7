package opic

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// benchName is page i's URL, over 1,000 hosts.
func benchName(i int) string { return fmt.Sprintf("http://h%d.test/page/%d", i%1000, i) }

var benchT0 = time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)

// buildBenchState makes a state of about n pages: visits of the first
// n/20 pages, 20 links each to pages drawn from all n, in batches of
// 20,000 records.
func buildBenchState(b *testing.B, path string, n int) *DB {
	d, err := Open(path, DBOptions{Damping: 0.85, Window: 720 * time.Hour})
	if err != nil {
		b.Fatal(err)
	}
	visited := n / 20
	for start := 0; start < visited; start += 20000 {
		var items []Item
		for i := start; i < min(start+20000, visited); i++ {
			it := Item{Kind: RecordItem, URL: benchName(i), HasLinks: true, FetchedAt: benchT0}
			// Links cover every page once (i*20+k) and are shuffled by host.
			for k := range 20 {
				it.Links = append(it.Links, benchName(i*20+k))
			}
			items = append(items, it)
		}
		if _, err := d.Apply("", items); err != nil {
			b.Fatal(err)
		}
	}
	return d
}

// benchTurn is one crawl turn: 500 visits of pages never fetched and 200
// of pages fetched before, 20 links each (15 to known pages, 5 new).
func benchTurn(rng *rand.Rand, n, turn int) []Item {
	t := benchT0.Add(time.Duration(turn+1) * time.Hour)
	items := make([]Item, 0, 700)
	for k := range 700 {
		var page int
		if k < 500 {
			page = n/20 + rng.IntN(n-n/20)
		} else {
			page = rng.IntN(n / 20)
		}
		it := Item{Kind: RecordItem, URL: benchName(page), HasLinks: true, FetchedAt: t}
		for j := range 20 {
			if j < 15 {
				it.Links = append(it.Links, benchName(rng.IntN(n)))
			} else {
				it.Links = append(it.Links, benchName(n+turn*10000+k*5+j))
			}
		}
		items = append(items, it)
	}
	return items
}

var (
	benchStates = map[int]*DB{}
	benchTimes  = map[int]float64{} // ns a turn, by state size
)

// BenchmarkDBTurn applies one turn's batch (700 fetch records, 20 links
// each, 500 of them new pages) to states of growing size, each turn a new
// batch ID, committed to disk. The largest size reports its time as a
// ratio to the smallest's (x-smallest).
//
//	go test ./pkg/opic -run '^$' -bench DBTurn -benchtime 3x
//
// OPIC_BENCH_5M=1 adds a 5M-page state (a few minutes to build).
func BenchmarkDBTurn(b *testing.B) {
	sizes := []int{10_000, 100_000, 1_000_000}
	if os.Getenv("OPIC_BENCH_5M") != "" {
		sizes = append(sizes, 5_000_000)
	}
	dir := b.TempDir()
	for _, n := range sizes {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			d := benchStates[n]
			if d == nil {
				d = buildBenchState(b, filepath.Join(dir, fmt.Sprintf("s%d.opic", n)), n)
				benchStates[n] = d
			}
			rng := rand.New(rand.NewPCG(uint64(n), 3))
			turns := make([][]Item, b.N)
			for i := range turns {
				turns[i] = benchTurn(rng, n, int(d.meta.Batches)+i)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				if _, err := d.Apply(fmt.Sprintf("%06d", d.meta.Batches), turns[i]); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			per := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
			benchTimes[n] = per
			b.ReportMetric(float64(d.Len()), "pages")
			if n == sizes[len(sizes)-1] && benchTimes[sizes[0]] > 0 {
				b.ReportMetric(per/benchTimes[sizes[0]], "x-smallest")
			}
			if st, err := os.Stat(d.Path()); err == nil {
				b.ReportMetric(float64(st.Size())/float64(d.Len()), "disk-B/page")
			}
		})
	}
}
