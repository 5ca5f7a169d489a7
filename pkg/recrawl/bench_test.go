package recrawl

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/sekitei/crawlkit/pkg/record"
)

// cpuTime is the process's user+system CPU time. On a shared machine the
// wall clock counts other people's work; run with -cpu 1 and read the
// cpu-s metric as the single-core cost.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func reportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric((cpuTime()-start).Seconds()/float64(b.N), "cpu-s/op")
}

// benchPages is the size of the target: 10,000,000 pages on
// 100,000 hosts, a third of them without a limit.
var benchPages = 10_000_000

const benchHosts = 100_000

func BenchmarkSolve10M(b *testing.B) {
	p := randomProblem(rand.New(rand.NewPCG(7, 7)), benchPages, benchHosts, Freshness)
	b.ResetTimer()
	defer reportCPU(b, cpuTime())
	for i := 0; i < b.N; i++ {
		s, err := Solve(p, SolveOptions{})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(s.Passes), "passes")
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(benchPages), "ns/page")
}

func benchPagesSet() *Pages {
	rng := rand.New(rand.NewPCG(8, 8))
	p := randomProblem(rng, benchPages, benchHosts, Freshness)
	ps := &Pages{W: p.W, Delta: p.Delta, Host: p.Host, HostRate: p.HostRate,
		HostNames: make([]string, benchHosts), Tau: make([]float64, benchPages)}
	for j := range ps.Tau {
		ps.Tau[j] = rng.Float64() * 10
		if j%50 == 0 {
			ps.Tau[j] = math.Inf(1) // never fetched
		}
	}
	return ps
}

func BenchmarkRank10M(b *testing.B) {
	ps := benchPagesSet()
	b.ResetTimer()
	defer reportCPU(b, cpuTime())
	for i := 0; i < b.N; i++ {
		res, err := Rank(ps, RankOptions{Rate: float64(benchPages) * 0.4, Slot: 1.0 / 24})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(len(res.Selected)), "selected")
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(benchPages), "ns/page")
}

// BenchmarkSortPeer10M is the yardstick the figures in docs/recrawl.md are
// compared with: sorting 10M float64 values with slices.Sort.
func BenchmarkSortPeer10M(b *testing.B) {
	rng := rand.New(rand.NewPCG(9, 9))
	src := make([]float64, benchPages)
	for i := range src {
		src[i] = rng.Float64()
	}
	v := make([]float64, benchPages)
	b.ResetTimer()
	defer reportCPU(b, cpuTime())
	for i := 0; i < b.N; i++ {
		copy(v, src)
		slices.Sort(v)
	}
}

// BenchmarkRankRecords is `recrawl rank`'s whole work on page records held
// in memory: every line parsed (PageReader, as the command reads), the pages
// ranked for a one-hour slot at a global rate of 0.4 crawls a day per
// page (as scripts/records-bench.sh runs the command; crawl values only
// where they can reach lambda_0, CandidateValues, as it ranks), and the selected
// records written with crawl_value, due and next_fetch; without the
// process, its reads and writes. One op is one pass over
// $CRAWLKIT_BENCH_PAGES (scripts/recrawl-genpages.sh output) or, without
// it, 200,000 generated pages. cpu-records/s is pages per CPU second.
// Run: go test ./pkg/recrawl -run '^$' -bench RankRecords -cpu 1 -benchtime 3x
func BenchmarkRankRecords(b *testing.B) {
	var data []byte
	if name := os.Getenv("CRAWLKIT_BENCH_PAGES"); name != "" {
		var err error
		if data, err = os.ReadFile(name); err != nil {
			b.Fatal(err)
		}
	} else {
		data = genPageRecords(200_000)
	}
	now := time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC)
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	start := cpuTime()
	pages := 0
	for i := 0; i < b.N; i++ {
		pages = rankRecords(b, data, now)
	}
	b.ReportMetric(float64(pages*b.N)/(cpuTime()-start).Seconds(), "cpu-records/s")
}

// rankRecords is one pass of BenchmarkRankRecords; it returns the pages read.
func rankRecords(b *testing.B, data []byte, now time.Time) int {
	opt := PageOptions{Now: now, WeightField: "weight", DefaultWeight: 1, DefaultChangeRate: 0.2}
	ps := &Pages{}
	ps.Grow(record.EstimateLines(data))
	lines := make([][]byte, 0, record.EstimateLines(data)) // the line of each page, for the output
	r := new(record.Record)
	pr := NewPageReader(&opt)
	pr.AddsTo(ps)
	lr := record.NewBytesLineReader(data)
	for {
		line, _, err := lr.Next()
		if err != nil {
			break
		}
		p, err := pr.Read(line)
		if err != nil {
			b.Fatal(err)
		}
		ps.Add(p)
		lines = append(lines, line)
	}
	// As the command ranks when it writes the selected pages only.
	res, err := Rank(ps, RankOptions{Rate: float64(ps.Len()) * 0.4, Slot: 1.0 / 24, CandidateValues: true})
	if err != nil {
		b.Fatal(err)
	}
	out := make([]byte, 0, 64<<10)
	for _, j := range res.Selected {
		if err := record.ParseView(r, lines[j]); err != nil {
			b.Fatal(err)
		}
		r.SetFloat("crawl_value", res.Value[j])
		r.SetBool("due", true)
		r.SetTime("next_fetch", now)
		out = append(r.AppendJSON(out), '\n')
		if len(out) >= 60<<10 {
			out = out[:0]
		}
	}
	return ps.Len()
}

// genPageRecords writes n page records like scripts/recrawl-genpages.sh's.
func genPageRecords(n int) []byte {
	rng := rand.New(rand.NewPCG(1, 1))
	now := time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC)
	var buf bytes.Buffer
	for i := 0; i < n; i++ {
		h := rng.IntN(10000)
		fmt.Fprintf(&buf, `{"url":"https://h%d.example/p/%d","weight":%.4f,"change_rate":%.4f,"last_fetch":"%s"`,
			h, i, math.Exp(rng.NormFloat64()*0.7), 0.05*math.Exp(rng.Float64()*math.Log(100)),
			now.Add(-time.Duration(rng.IntN(10*86400))*time.Second).Format(time.RFC3339))
		if h%3 != 0 {
			fmt.Fprintf(&buf, `,"host_rate":%d`, 50+h%200)
		}
		buf.WriteString("}\n")
	}
	return buf.Bytes()
}
