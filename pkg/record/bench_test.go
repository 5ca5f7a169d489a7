package record

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"syscall"
	"testing"
	"time"
)

// cpuTime is the process's user+system CPU time: on a shared machine the
// wall clock counts other people's work.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPURate reports bytes and records per CPU second since start.
func reportCPURate(b *testing.B, start time.Duration, bytes, records int) {
	s := (cpuTime() - start).Seconds()
	b.ReportMetric(float64(bytes*b.N)/s/1e6, "cpu-MB/s")
	b.ReportMetric(float64(records*b.N)/s, "cpu-records/s")
}

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

// fetchLine is a fetch record of about 1 KB with 20 links, as fetch writes.
func fetchLine(i int) string {
	var links []string
	for j := 0; j < 20; j++ {
		links = append(links, fmt.Sprintf(`"https://site%d.example/section/%d/article-%d.html"`, i%97, j, i*31+j))
	}
	return fmt.Sprintf(`{"url":"https://site%d.example/section/%d/article-%d.html","host":"site%d.example","status":200,`+
		`"fetched_at":"2026-11-20T10:%02d:%02dZ","content_type":"text/html; charset=utf-8","length":%d,`+
		`"digest":"sha256:%064x","title":"Article %d \u2014 the \"news\" of the day","links":[%s],`+
		`"warc_file":"crawl-00001.warc.gz","warc_offset":%d,"elapsed_ms":%d}`,
		i%97, i%13, i, i%97, i%60, i%60, 20000+i%5000, i*2654435761, i, strings.Join(links, ","), i*17000, 20+i%300)
}

func fetchInput(n int) []byte {
	var buf bytes.Buffer
	for i := 0; i < n; i++ {
		buf.WriteString(fetchLine(i))
		buf.WriteByte('\n')
	}
	return buf.Bytes()
}

// BenchmarkPassThrough reads fetch records and writes them back unchanged
// through Input and Writer: the record layer's cost on its own.
func BenchmarkPassThrough(b *testing.B) {
	in := fetchInput(2000)
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	defer reportCPURate(b, cpuTime(), len(in), 2000)
	for i := 0; i < b.N; i++ {
		w := NewWriter(io.Discard)
		input := &Input{Tool: "bench", Stdin: bytes.NewReader(in), Stderr: io.Discard}
		if err := input.Each(context.Background(), nil, func(r *Record) error { return w.Write(r) }); err != nil {
			b.Fatal(err)
		}
		w.Flush()
	}
}

// BenchmarkPassThroughReuse is BenchmarkPassThrough with Input.Reuse.
func BenchmarkPassThroughReuse(b *testing.B) {
	in := fetchInput(2000)
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	defer reportCPURate(b, cpuTime(), len(in), 2000)
	for i := 0; i < b.N; i++ {
		w := NewWriter(io.Discard)
		input := &Input{Tool: "bench", Stdin: bytes.NewReader(in), Stderr: io.Discard, Reuse: true}
		if err := input.Each(context.Background(), nil, func(r *Record) error { return w.Write(r) }); err != nil {
			b.Fatal(err)
		}
		w.Flush()
	}
}

// BenchmarkAddField is BenchmarkPassThrough with a field read and one added,
// as most tools do.
func BenchmarkAddField(b *testing.B) {
	in := fetchInput(2000)
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	defer reportCPURate(b, cpuTime(), len(in), 2000)
	for i := 0; i < b.N; i++ {
		w := NewWriter(io.Discard)
		input := &Input{Tool: "bench", Stdin: bytes.NewReader(in), Stderr: io.Discard}
		if err := input.Each(context.Background(), nil, func(r *Record) error {
			r.SetInt("n", int64(len(r.URL())))
			return w.Write(r)
		}); err != nil {
			b.Fatal(err)
		}
		w.Flush()
	}
}

// BenchmarkURLLines reads plain URL lines and writes them as records.
func BenchmarkURLLines(b *testing.B) {
	var buf bytes.Buffer
	for i := 0; i < 20000; i++ {
		fmt.Fprintf(&buf, "http://lenta.ru/news/2013/%02d/%02d/story%d/\n", i%12+1, i%28+1, i)
	}
	in := buf.Bytes()
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	defer reportCPURate(b, cpuTime(), len(in), 20000)
	for i := 0; i < b.N; i++ {
		w := NewWriter(io.Discard)
		input := &Input{Tool: "bench", Stdin: bytes.NewReader(in), Stderr: io.Discard}
		if err := input.Each(context.Background(), nil, func(r *Record) error { return w.Write(r) }); err != nil {
			b.Fatal(err)
		}
		w.Flush()
	}
}

// BenchmarkFieldScanner scans page records as recrawl rank's first pass
// does: the url and its host, two numbers, a time and a number that two
// lines of three have, from lines like scripts/recrawl-genpages.sh's
// (512 of them, 64 KB: the lines are in the cache, as a line just split
// from the input is).
func BenchmarkFieldScanner(b *testing.B) {
	lines := make([][]byte, 512)
	for i := range lines {
		s := fmt.Sprintf(`{"url":"https://h%d.example/p/%d","weight":0.%04d,"change_rate":%d.%04d,"last_fetch":"2026-11-%02dT%02d:%02d:%02dZ"`,
			i*7919%10000, i, i*37%10000, i%5, i*91%10000, 11+i*7%10, i%24, i%60, i*7%60)
		if i%3 != 0 {
			s += fmt.Sprintf(`,"host_rate":%d`, 50+i%200)
		}
		lines[i] = []byte(s + "}")
	}
	s := NewFieldScanner(Field{Key: "url"}, Field{Key: "host"}, Field{Key: "weight", Kind: NumberField},
		Field{Key: "change_rate", Kind: NumberField}, Field{Key: "last_fetch", Kind: TimeField}, Field{Key: "host_rate", Kind: NumberField})
	b.ReportAllocs()
	b.ResetTimer()
	start := cpuTime()
	for i := 0; i < b.N; i++ {
		if !s.Scan(lines[i%len(lines)]) {
			b.Fatal("not taken")
		}
	}
	b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
}
