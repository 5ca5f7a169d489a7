package recrawl

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/sekitei/crawlkit/pkg/record"
)

// tauOf gives the days parsePage's general way gives (RawTime, then
// now.Sub) wherever it answers, on many generated last_fetch values:
// times just before, at and after now (to the nanosecond), fractions of
// every length, leap days, times centuries back (where Sub saturates),
// escapes, other forms and broken values; and it answers for the common
// ones.
func TestTauOfMatchesRawTime(t *testing.T) {
	rng := rand.New(rand.NewPCG(51, 52))
	nows := []time.Time{time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC), time.Date(2026, 11, 21, 10, 30, 0, 123456789, time.UTC),
		time.Date(2024, 2, 29, 23, 59, 59, 999999999, time.UTC)}
	answered := 0
	for i := 0; i < 200_000; i++ {
		now := nows[rng.IntN(len(nows))]
		var last time.Time
		switch rng.IntN(6) {
		case 0:
			last = now.Add(time.Duration(rng.Int64N(2e9) - 1e9)) // within a second
		case 1:
			last = now.Add(-time.Duration(rng.Int64N(int64(400 * 24 * time.Hour))))
		case 2:
			last = time.Date(1+rng.IntN(2100), time.Month(1+rng.IntN(12)), 1+rng.IntN(31), rng.IntN(24), rng.IntN(60), rng.IntN(60), rng.IntN(1e9), time.UTC)
		default:
			last = now.Add(-time.Duration(rng.Int64N(int64(10 * 24 * time.Hour))))
		}
		var s string
		switch rng.IntN(8) {
		case 0:
			s = last.Format(time.RFC3339Nano)
		case 1:
			s = last.Format("2006-01-02T15:04:05.000Z")
		case 2:
			s = last.Format("2006-01-02T15:04:05.0000000000Z") // ten digits: not the common form
		case 3:
			s = last.In(time.FixedZone("", 3600)).Format(time.RFC3339)
		case 4:
			s = fmt.Sprintf("%04d-%02d-%02dT%02d:%02d:%02dZ", rng.IntN(3000), rng.IntN(14), rng.IntN(33), rng.IntN(25), rng.IntN(61), rng.IntN(61))
		default:
			s = last.Format(time.RFC3339)
		}
		raw := []byte(`"` + s + `"`)
		switch rng.IntN(20) {
		case 0:
			raw = []byte(`"` + s[:len(s)-1] + `\u005A"`) // an escaped Z
		case 1:
			raw = []byte(s) // not a string
		case 2:
			raw = raw[:len(raw)-1-rng.IntN(3)]
		}
		tau, ok := tauOf(raw, now)
		if !ok {
			continue
		}
		answered++
		lt, has, err := record.RawTime("last_fetch", raw)
		if err != nil || !has || lt.After(now) {
			t.Fatalf("tauOf(%s) = %v, but RawTime gives %v, %v, %v (now %v)", raw, tau, lt, has, err, now)
		}
		want := float64(now.Sub(lt)) / float64(Day)
		if math.Float64bits(tau) != math.Float64bits(want) {
			t.Fatalf("tauOf(%s) = %v, want %v (now %v)", raw, tau, want, now)
		}
	}
	if answered < 100_000 {
		t.Fatalf("tauOf answered %d values of 200,000", answered)
	}
}
