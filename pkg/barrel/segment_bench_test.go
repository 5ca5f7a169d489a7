package barrel

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sekitei/crawlkit/pkg/barrel/internal/synth"
)

var (
	batchSizes   = flag.String("barrel.sizes", "10000,100000", "index sizes (pages) in BenchmarkAddBatch")
	batchBatches = flag.Int("barrel.batches", 5, "batches of 700 pages timed per index size in BenchmarkAddBatch")
)

// writtenBytes is the bytes this process has written (wchar of
// /proc/self/io): every file write, whatever the file.
func writtenBytes(b *testing.B) int64 {
	f, err := os.Open("/proc/self/io")
	if err != nil {
		b.Skip("no /proc/self/io")
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if v, ok := strings.CutPrefix(s.Text(), "wchar: "); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	b.Fatal("no wchar in /proc/self/io")
	return 0
}

// BenchmarkAddBatch builds indexes of each size in -barrel.sizes (in
// batches of 5% of the size, with the merge policy, as a crawl would),
// then adds -barrel.batches batches of 700 pages (500 new, 200 re-crawled
// and changed) to each and reports bytes written and time per batch, and
// query latency on the segmented index against the same index merged into
// one segment. PageRank is left to its schedule (not run in the timed
// batches). Ratios are printed against the first size, measured in the
// same run.
func BenchmarkAddBatch(b *testing.B) {
	var sizes []int
	for _, s := range strings.Split(*batchSizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1000 {
			b.Fatalf("-barrel.sizes: %q", s)
		}
		sizes = append(sizes, n)
	}
	type row struct {
		pages                int
		bytes                int64
		dur                  time.Duration
		qSeg, qMerged        time.Duration
		segP50, mergedP50    time.Duration
		segCount, mergedSegs int
	}
	var rows []row
	for range b.N {
		rows = rows[:0]
		for _, n := range sizes {
			maxPages := n + 500**batchBatches
			site := synth.New(maxPages, 50000, 1)
			dir := b.TempDir()
			opts := Options{PageRankEvery: 1 << 30, MergeFactor: DefaultMergeFactor}
			step := max(1000, n/20)
			for lo := 0; lo < n; lo += step {
				bl, err := NewBuilder(dir, opts)
				if err != nil {
					b.Fatal(err)
				}
				for i := lo; i < min(n, lo+step); i++ {
					bl.Add(site.URL(i), site.Page(i))
				}
				if err := bl.Commit(); err != nil {
					b.Fatal(err)
				}
				bl.Close()
			}
			r := row{pages: n}
			next := n
			for k := range *batchBatches {
				type page struct {
					url  string
					body []byte
				}
				var pages []page
				for range 500 {
					pages = append(pages, page{site.URL(next), site.Page(next)})
					next++
				}
				for j := range 200 { // re-crawls with new content
					i := (k*7919 + j*104729) % n
					pages = append(pages, page{site.URL(i), site.Page((i + 1 + k) % maxPages)})
				}
				w0, t0 := writtenBytes(b), time.Now()
				bl, err := NewBuilder(dir, opts)
				if err != nil {
					b.Fatal(err)
				}
				for _, p := range pages {
					bl.Add(p.url, p.body)
				}
				if err := bl.Commit(); err != nil {
					b.Fatal(err)
				}
				bl.Close()
				r.dur += time.Since(t0)
				r.bytes += writtenBytes(b) - w0
			}
			r.dur /= time.Duration(*batchBatches)
			r.bytes /= int64(*batchBatches)
			queries := site.Queries(400)
			lat := func() (time.Duration, time.Duration, int) {
				idx, err := Open(dir)
				if err != nil {
					b.Fatal(err)
				}
				defer idx.Close()
				for _, q := range queries { // map and check the barrels first
					idx.Search(q, SearchOptions{N: 10, NoSnippets: true})
				}
				var ds []time.Duration
				var total time.Duration
				for range 3 {
					for _, q := range queries {
						t0 := time.Now()
						if _, err := idx.Search(q, SearchOptions{N: 10, NoSnippets: true}); err != nil {
							b.Fatal(err)
						}
						d := time.Since(t0)
						ds = append(ds, d)
						total += d
					}
				}
				return total / time.Duration(len(ds)), percentile(ds, 0.5), len(idx.Segments())
			}
			r.qSeg, r.segP50, r.segCount = lat()
			if _, err := ForceMerge(dir, Options{}); err != nil {
				b.Fatal(err)
			}
			r.qMerged, r.mergedP50, r.mergedSegs = lat()
			rows = append(rows, r)
		}
	}
	fmt.Printf("| index pages | segments | bytes written per batch | time per batch | query mean segmented / merged | query p50 segmented / merged |\n|---|---|---|---|---|---|\n")
	for _, r := range rows {
		fmt.Printf("| %d | %d | %.1f MB (%.2fx) | %.2f s (%.2fx) | %v / %v = %.2fx | %v / %v = %.2fx |\n", r.pages, r.segCount,
			float64(r.bytes)/1e6, float64(r.bytes)/float64(rows[0].bytes), r.dur.Seconds(), r.dur.Seconds()/rows[0].dur.Seconds(),
			r.qSeg.Round(time.Microsecond), r.qMerged.Round(time.Microsecond), float64(r.qSeg)/float64(r.qMerged),
			r.segP50.Round(time.Microsecond), r.mergedP50.Round(time.Microsecond), float64(r.segP50)/float64(r.mergedP50))
	}
}
