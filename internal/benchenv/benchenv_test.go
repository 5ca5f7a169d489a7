package benchenv

import (
	"strings"
	"testing"
)

func TestMedian(t *testing.T) {
	for _, c := range []struct {
		v    []float64
		want float64
	}{{[]float64{3, 1, 2}, 2}, {[]float64{4, 1, 3, 2}, 2.5}, {[]float64{7}, 7}, {nil, 0}} {
		if got := Median(c.v); got != c.want {
			t.Errorf("Median(%v) = %v, want %v", c.v, got, c.want)
		}
	}
	v := []float64{3, 1, 2}
	Median(v)
	if v[0] != 3 {
		t.Error("Median sorted its argument")
	}
}

// TestCommitAndLoad: in this checkout, a commit of hex digits (maybe
// marked) and three load figures.
func TestCommitAndLoad(t *testing.T) {
	c := strings.TrimSuffix(Commit(), "+changes")
	if len(c) < 7 || strings.Trim(c, "0123456789abcdef") != "" {
		t.Errorf("Commit() = %q", Commit())
	}
	if f := strings.Fields(LoadAverage()); len(f) != 3 {
		t.Errorf("LoadAverage() = %q", LoadAverage())
	}
}

func TestPercentile(t *testing.T) {
	v := make([]float64, 24) // a day of turns: 24, 23, ..., 1
	for i := range v {
		v[i] = float64(24 - i)
	}
	for _, c := range []struct{ p, want float64 }{{0.5, 13}, {0.95, 23}, {1, 24}, {0, 1}} {
		if got := Percentile(v, c.p); got != c.want {
			t.Errorf("Percentile(1..24, %v) = %v, want %v", c.p, got, c.want)
		}
	}
	if got := Percentile([]float64{5}, 0.95); got != 5 {
		t.Errorf("Percentile([5], 0.95) = %v", got)
	}
	if v[0] != 24 {
		t.Error("Percentile sorted its argument")
	}
}
