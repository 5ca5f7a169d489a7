package queue

import (
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"
)

// benchState builds a state of n pages on n/100 hosts, two thirds fetched
// at times spread over the last 30 days, a third only linked, with log-normal
// importances, through the Go API in large batches without fsync.
func benchState(b *testing.B, n int) (*Queue, time.Time) {
	b.Helper()
	q, err := Open(filepath.Join(b.TempDir(), "s"), Options{NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	now := t0.Add(30 * 24 * time.Hour)
	const per = 20000
	for start, k := 0, 0; start < n; start, k = start+per, k+1 {
		var bt Batch
		for i := start; i < min(n, start+per); i++ {
			u := benchURL(i, n)
			if i%3 == 2 {
				bt.Weights = append(bt.Weights, Weight{URL: u, Host: benchHost(i, n), Importance: math.Exp(rng.NormFloat64())})
				continue
			}
			at := t0.Add(time.Duration(rng.Float64() * float64(30*24*time.Hour)))
			bt.Fetches = append(bt.Fetches, Fetch{URL: u, Host: benchHost(i, n), At: at, Status: 200, Digest: fmt.Sprint(i)})
			bt.Weights = append(bt.Weights, Weight{URL: u, Host: benchHost(i, n), Importance: math.Exp(rng.NormFloat64())})
		}
		bt.Now = now
		if _, err := q.Apply(fmt.Sprintf("0-%06d", k), bt); err != nil {
			b.Fatal(err)
		}
	}
	return q, now
}

func benchHost(i, n int) string { return fmt.Sprintf("h%d.example", i%max(1, n/100)) }
func benchURL(i, n int) string  { return fmt.Sprintf("http://%s/page/%d", benchHost(i, n), i) }

// BenchmarkTurn is one crawl turn's update and next against states of
// growing size: 700 fetch records (200 recrawls of fetched pages, 500 first
// fetches of linked pages) with 20 links each (a quarter of them new
// pages), then the next 700 candidates.
func BenchmarkTurn(b *testing.B) {
	for _, n := range []int{10_000, 100_000, 1_000_000} {
		b.Run(fmt.Sprintf("pages=%d", n), func(b *testing.B) {
			q, now := benchState(b, n)
			defer q.Close()
			rng := rand.New(rand.NewPCG(3, 4))
			next := n
			b.ReportAllocs()
			b.ResetTimer()
			for it := 0; it < b.N; it++ {
				now = now.Add(time.Hour)
				var bt Batch
				bt.Now = now
				for k := 0; k < 700; k++ {
					var i int
					if k < 500 {
						i = 3*rng.IntN(n/3) + 2 // a page only linked so far
					} else {
						i = 3 * rng.IntN(n/3)
					}
					f := Fetch{URL: benchURL(i, n), Host: benchHost(i, n), At: now.Add(-time.Duration(k) * time.Second), Status: 200,
						Digest: fmt.Sprint(i, rng.IntN(2))}
					for l := 0; l < 20; l++ {
						j := rng.IntN(n)
						if l%4 == 0 {
							j, next = next, next+1
						}
						f.Links = append(f.Links, benchURL(j, n))
					}
					bt.Fetches = append(bt.Fetches, f)
				}
				if _, err := q.Apply(fmt.Sprintf("1-%06d", it), bt); err != nil {
					b.Fatal(err)
				}
				cands, info, err := q.Next(NextOptions{Now: now, N: 700, Slot: 1.0 / 24, HostRate: func(string) float64 { return 240 }})
				if err != nil || len(cands) != 700 {
					b.Fatal(len(cands), err)
				}
				b.ReportMetric(float64(info.Touched), "entries-read/op")
			}
		})
	}
}
