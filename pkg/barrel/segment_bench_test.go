package barrel

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"runtime"
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

// peakRSS resets the process's peak resident set (VmHWM) when reset is
// set, and returns it in bytes.
func peakRSS(b *testing.B, reset bool) int64 {
	if reset {
		if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
			b.Fatalf("resetting the peak RSS: %v", err)
		}
		return 0
	}
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	b.Fatal("no VmHWM in /proc/self/status")
	return 0
}

// BenchmarkAddBatch builds indexes of each size in -barrel.sizes (in
// batches of 5% of the size through the Go API, with the merge policy),
// then adds -barrel.batches batches of 700 pages (500 new, 200 re-crawled
// and changed), as one turn of the crawl loop does, and reports per batch
// the bytes written, the wall time (mean and slowest) and the process's
// peak resident memory; query latency (p50, p99) on the segmented index
// and on the same index merged into one segment; and the time of one
// PageRank over every link (barrel pagerank). PageRank is left to its
// schedule in the timed batches. Ratios are against the first size,
// measured in the same run.
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
		pages              int
		bytes, rss         int64
		dur, slowest, rank time.Duration
		segP50, mergedP50  time.Duration
		segP99, mergedP99  time.Duration
		segCount           int
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
				runtime.GC()
				peakRSS(b, true)
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
				d := time.Since(t0)
				r.dur += d
				r.slowest = max(r.slowest, d)
				r.bytes += writtenBytes(b) - w0
				r.rss = max(r.rss, peakRSS(b, false))
			}
			r.dur /= time.Duration(*batchBatches)
			r.bytes /= int64(*batchBatches)
			queries := site.Queries(400)
			lat := func() (p50, p99 time.Duration, segs int) {
				idx, err := Open(dir)
				if err != nil {
					b.Fatal(err)
				}
				defer idx.Close()
				for _, q := range queries { // map and check the barrels first
					idx.Search(q, SearchOptions{N: 10, NoSnippets: true})
				}
				var ds []time.Duration
				for range 3 {
					for _, q := range queries {
						t0 := time.Now()
						if _, err := idx.Search(q, SearchOptions{N: 10, NoSnippets: true}); err != nil {
							b.Fatal(err)
						}
						ds = append(ds, time.Since(t0))
					}
				}
				return percentile(ds, 0.5), percentile(ds, 0.99), len(idx.Segments())
			}
			r.segP50, r.segP99, r.segCount = lat()
			t0 := time.Now()
			if _, err := RankIndex(dir, Options{}); err != nil {
				b.Fatal(err)
			}
			r.rank = time.Since(t0)
			if _, err := ForceMerge(dir, Options{}); err != nil {
				b.Fatal(err)
			}
			r.mergedP50, r.mergedP99, _ = lat()
			rows = append(rows, r)
		}
	}
	fmt.Printf("| index pages | segments | bytes written per batch | time per batch (slowest) | peak RSS | query p50 segmented / merged | query p99 segmented / merged | PageRank |\n|---|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		f := rows[0]
		fmt.Printf("| %d | %d | %.1f MB (%.2fx) | %.2f s (%.2fx; slowest %.2f s) | %.0f MB (%.2fx) | %v / %v = %.2fx | %v / %v = %.2fx | %.1f s |\n", r.pages, r.segCount,
			float64(r.bytes)/1e6, float64(r.bytes)/float64(f.bytes), r.dur.Seconds(), r.dur.Seconds()/f.dur.Seconds(), r.slowest.Seconds(),
			float64(r.rss)/1e6, float64(r.rss)/float64(f.rss),
			r.segP50.Round(time.Microsecond), r.mergedP50.Round(time.Microsecond), float64(r.segP50)/float64(r.mergedP50),
			r.segP99.Round(time.Microsecond), r.mergedP99.Round(time.Microsecond), float64(r.segP99)/float64(r.mergedP99),
			r.rank.Seconds())
	}
}
