package report

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/sekitei/crawlkit/pkg/recrawl/queue"
)

// The time axis is in the unit the crawl's age warrants, starts at the
// first turn whatever order the turns' times come in, and its bars start
// at the axis.
func TestTimeAxis(t *testing.T) {
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		age  time.Duration
		unit string
		last float64
	}{
		{40 * time.Second, "seconds", 40},
		{4 * time.Minute, "minutes", 4},
		{12 * time.Hour, "hours", 12},
		{10 * 24 * time.Hour, "days", 10},
	} {
		// The second turn's time is before the first's: x starts at the
		// earliest, never below 0.
		turns := []Turn{{HistoryEntry: queue.HistoryEntry{Time: t0.Add(c.age / 10)}}, {HistoryEntry: queue.HistoryEntry{Time: t0}},
			{HistoryEntry: queue.HistoryEntry{Time: t0.Add(c.age)}}}
		xa, xs := timeAxis(turns)
		if !strings.HasPrefix(xa.label, c.unit) || xs[1] != 0 || xs[0] < 0 || xs[2] != c.last {
			t.Errorf("age %v: axis %q, x %v", c.age, xa.label, xs)
		}
		if xa.lo != -xa.width/2 || xa.hi < c.last+xa.width/2 {
			t.Errorf("age %v: domain %v..%v for bars %v wide", c.age, xa.lo, xa.hi, xa.width)
		}
		for _, v := range (scale{lo: xa.lo, hi: xa.hi}).ticks(8) {
			if v < 0 {
				t.Errorf("age %v: tick at %v", c.age, v)
			}
		}
	}
}

// Log axes are labelled with the values, not their logarithms.
func TestLogTicks(t *testing.T) {
	s := logFor(64800, 864000, 0, 1)
	var labels []string
	for _, v := range s.ticks(6) {
		labels = append(labels, num(v))
	}
	if got := strings.Join(labels, " "); got != "10k 20k 50k 100k 200k 500k 1M" {
		t.Errorf("log ticks %q", got)
	}
	s = logFor(3, 250000, 0, 1)
	labels = labels[:0]
	for _, v := range s.ticks(6) {
		labels = append(labels, num(v))
	}
	if got := strings.Join(labels, " "); got != "1 10 100 1000 10k 100k 1M" {
		t.Errorf("log ticks %q", got)
	}
	negZero := math.Copysign(0, -1)
	if num(negZero) != "0" || bytesNum(2450000) != "2.45 MB" || rateText(0.125) != "1/8" {
		t.Errorf("%q %q %q", num(negZero), bytesNum(2450000), rateText(0.125))
	}
}

// A plot with no values (no host-rate estimates, no turns kept) is drawn
// empty, at once.
func TestEmptyPlots(t *testing.T) {
	for _, log := range []bool{true, false} {
		if s := hbars("plot-x", "x", nil, []series{{"a", "#000", nil}}, "x", log, num); !strings.Contains(s, "axis-x") {
			t.Errorf("log %v: %s", log, s)
		}
	}
	xa, xs := timeAxis(nil)
	if s := stackedBars("plot-y", "y", xa, xs, nil, "y", num); !strings.Contains(s, "axis-x") {
		t.Error(s)
	}
	if s := histogram("plot-z", "z", nil, nil, "z"); !strings.Contains(s, "axis-x") {
		t.Error(s)
	}
}
