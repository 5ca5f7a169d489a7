package main

import (
	"strings"
	"testing"
)

// TestSummarize: three runs of two benchmarks give each metric's median
// and range; other lines are ignored, and a result printed apart from its
// name (the benchmark wrote in between) counts.
func TestSummarize(t *testing.T) {
	in := `goos: linux
BenchmarkVsBleve-2   	       1	5206839145 ns/op	     19203 barrel-docs/s	         5.690 speedup	       640.0 cpu-p50-µs
BenchmarkVsBleve-2   	
1000 pages, 2.5 MB of HTML, 100 queries (99 with results)
index:   barrel 2.48s (404 docs/s)  bleve 5.03s (199 docs/s)  speedup 2.03x
       1	6206839145 ns/op	     18000 barrel-docs/s	         5.480 speedup	       700.0 cpu-p50-µs
--- BENCH: BenchmarkVsBleve-2
        1000 pages, 2.5 MB of HTML, 100 queries (99 with results)
BenchmarkBuild-2     	   20000	     51234 ns/op
BenchmarkVsBleve-2   	       1	4206839145 ns/op	     21000 barrel-docs/s	         5.920 speedup	       550.0 cpu-p50-µs
PASS
ok  	github.com/sekitei/crawlkit/pkg/barrel/blevebench	60.1s
`
	var out strings.Builder
	if err := summarize(strings.NewReader(in), &out); err != nil {
		t.Fatal(err)
	}
	want := `| benchmark | metric | median | range | runs |
|---|---|---:|---:|---:|
| BenchmarkVsBleve | ns/op | 5206839145 | 4206839145-6206839145 | 3 |
| BenchmarkVsBleve | barrel-docs/s | 19203 | 18000-21000 | 3 |
| BenchmarkVsBleve | speedup | 5.69 | 5.48-5.92 | 3 |
| BenchmarkVsBleve | cpu-p50-µs | 640 | 550-700 | 3 |
| BenchmarkBuild | ns/op | 51234 | 51234-51234 | 1 |
`
	if out.String() != want {
		t.Errorf("got\n%s\nwant\n%s", out.String(), want)
	}
	if err := summarize(strings.NewReader("PASS\n"), &out); err == nil {
		t.Error("no error for an input without results")
	}
}
