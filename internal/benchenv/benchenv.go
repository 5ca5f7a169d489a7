// Package benchenv is what every benchmark program prints beside its
// figures, so that a table says where it comes from (the commit and the
// machine's load) and how it spreads (the median of several runs).
package benchenv

import (
	"os"
	"os/exec"
	"slices"
	"strings"
)

// Commit is the checkout's short commit, marked "+changes" when the
// code (pkg, cmd, internal, scripts) differs from it.
func Commit() string {
	out, err := exec.Command("git", "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return "unknown"
	}
	c := strings.TrimSpace(string(out))
	if exec.Command("git", "diff", "--quiet", "HEAD", "--", "pkg", "cmd", "internal", "scripts").Run() != nil {
		c += "+changes"
	}
	return c
}

// LoadAverage is the machine's load average over 1, 5 and 15 minutes.
func LoadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

// Median is the middle of v, or the mean of its two middle values.
func Median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	v = slices.Clone(v)
	slices.Sort(v)
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
}

// Percentile is the value at rank p (0 to 1) of v, not empty: the
// element int(p*len(v)) of v sorted, the largest at p = 1. The turn
// benchmarks report their median, 95th percentile and worst turn with
// it, the median of an even count being the upper of the two middle
// values (Median averages them, for the spread of a few runs).
func Percentile(v []float64, p float64) float64 {
	v = slices.Clone(v)
	slices.Sort(v)
	return v[min(len(v)-1, int(p*float64(len(v))))]
}
