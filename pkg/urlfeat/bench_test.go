package urlfeat

import (
	"bytes"
	"math/rand/v2"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// BenchmarkExtract measures per-URL feature extraction over the bundled
// general files (40,000 real URLs of lenta.ru and ru.wikipedia.org).
// Run: go test ./pkg/urlfeat -run '^$' -bench Extract -cpu 1
func BenchmarkExtract(b *testing.B) {
	urls := bundledURLs(b)
	var e Extractor
	b.ReportAllocs()
	b.ResetTimer()
	start := cpuTime()
	n := 0
	for i := 0; i < b.N; i++ {
		if _, err := e.Extract(urls[n]); err != nil {
			b.Fatal(err)
		}
		n++
		if n == len(urls) {
			n = 0
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "urls/s")
	// Per CPU second too: on a shared machine the wall clock counts
	// other people's work.
	b.ReportMetric(float64(b.N)/(cpuTime()-start).Seconds(), "cpu-urls/s")
}

// BenchmarkCount adds the features of each URL to a Counter, as
// `urlfeat count` does.
func BenchmarkCount(b *testing.B) {
	urls := bundledURLs(b)
	var e Extractor
	c := NewCounter()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		f, _ := e.Extract(urls[i%len(urls)])
		c.Add(f)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "urls/s")
}

// BenchmarkSample is one homework call: read both files, draw 1000+1000,
// count, threshold.
func BenchmarkSample(b *testing.B) {
	for i := 0; i < b.N; i++ {
		var files []*LineFile
		for _, name := range []string{"examined", "general"} {
			lf, err := ReadLineFile("../../testdata/sekitei/urls.wikipedia." + name)
			if err != nil {
				b.Fatal(err)
			}
			files = append(files, lf)
		}
		c, n := CountSample(files, 1000, rand.New(rand.NewPCG(uint64(i), 1)), nil)
		if len(c.AboveAlpha(0.1, int64(n))) == 0 {
			b.Fatal("no features")
		}
	}
}

// BenchmarkAnnotate is the per-URL command's whole work on its input held
// in memory: each line read as a record, its features extracted and the
// record written out with "host" and "features" (Annotator.AppendLine),
// without the process, its reads and writes. One op is one pass over the
// input: $CRAWLKIT_BENCH_INPUT (any file urlfeat reads; what
// scripts/records-bench.sh gives the command), or the bundled URLs.
// cpu-records/s is the rate per CPU second, for comparing with the
// command's on a shared machine.
// Run: go test ./pkg/urlfeat -run '^$' -bench Annotate -cpu 1 -benchtime 3x
func BenchmarkAnnotate(b *testing.B) {
	var data []byte
	if name := os.Getenv("CRAWLKIT_BENCH_INPUT"); name != "" {
		var err error
		if data, err = os.ReadFile(name); err != nil {
			b.Fatal(err)
		}
	} else {
		data = []byte(strings.Join(bundledURLs(b), "\n") + "\n")
	}
	lines := bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))
	var an Annotator
	out := make([]byte, 0, 64<<10)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	start := cpuTime()
	for i := 0; i < b.N; i++ {
		for _, line := range lines {
			var err error
			if out, err = an.AppendLine(out, line); err != nil {
				b.Fatal(err)
			}
			out = append(out, '\n')
			if len(out) >= 60<<10 {
				out = out[:0] // as the command's writer flushes
			}
		}
	}
	b.ReportMetric(float64(len(lines)*b.N)/(cpuTime()-start).Seconds(), "cpu-records/s")
}

// cpuTime is the process's user+system CPU time: on a shared machine the
// wall clock counts other people's work.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
