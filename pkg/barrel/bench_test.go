package barrel

import (
	"flag"
	"slices"
	"time"
)

// The comparison with bleve, the peer search engine, is the module
// pkg/barrel/blevebench, so that this module does not require bleve.

var benchDocs = flag.Int("barrel.docs", 2000, "synthetic pages of the search benchmarks")

func percentile(d []time.Duration, p float64) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[min(len(s)-1, int(p*float64(len(s))))]
}
