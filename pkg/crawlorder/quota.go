package crawlorder

import (
	"fmt"
	"math"
	"sort"
)

// Quota rules: how an index of limited size is shared. The lecture's three
// (everyone equal, by visits, by segments) and its baseline, the greedy
// index with a quota per site by visits.
const (
	QuotaNone     = "none"     // no quota: the order alone fills the index
	QuotaEqual    = "equal"    // every site MIN_QUOTA
	QuotaVisits   = "visits"   // every segment F(#Visits) * MIN_QUOTA
	QuotaSegments = "segments" // every segment #PagesWithQLinks * MIN_QUOTA (Sekitei; at least MIN_QUOTA)
	QuotaGreedy   = "greedy"   // every site F(#Visits) * MIN_QUOTA (the baseline)
)

// QuotaRules lists the rules in the order the evaluation prints them.
var QuotaRules = []string{QuotaNone, QuotaEqual, QuotaGreedy, QuotaVisits, QuotaSegments}

// A Unit is what a quota is given to, a site or a segment, with what the
// rules weigh: its pages with QLinks and their visits.
type Unit struct {
	Key    string
	QLinks int
	Visits float64
}

// PerSegment reports whether the rule gives quotas to segments (else to
// sites).
func PerSegmentRule(rule string) bool { return rule == QuotaVisits || rule == QuotaSegments }

// F is the lecture's F(#Visits): 1 + log2(1 + visits), so a unit without
// visits still gets MIN_QUOTA and a popular one grows slowly.
func F(visits float64) float64 {
	if !(visits > 0) || math.IsInf(visits, 0) {
		return 1
	}
	return 1 + math.Log2(1+visits)
}

// Weight is a unit's quota in units of MIN_QUOTA under rule. A segment
// without QLinks keeps one MIN_QUOTA under the segment rule: the lecture
// warns that crawling only segments with QLinks misses what is not known
// yet.
func Weight(rule string, u Unit) (float64, error) {
	switch rule {
	case QuotaEqual:
		return 1, nil
	case QuotaGreedy, QuotaVisits:
		return F(u.Visits), nil
	case QuotaSegments:
		return float64(max(u.QLinks, 1)), nil
	}
	return 0, fmt.Errorf("quota rule %q: want equal, greedy, visits or segments", rule)
}

// Quotas returns each unit's quota, Weight * minQuota rounded to whole
// pages (at least 1).
func Quotas(rule string, units []Unit, minQuota float64) (map[string]int, error) {
	if !(minQuota > 0) || math.IsInf(minQuota, 0) {
		return nil, fmt.Errorf("MIN_QUOTA %v: want a number above 0", minQuota)
	}
	q := make(map[string]int, len(units))
	for _, u := range units {
		w, err := Weight(rule, u)
		if err != nil {
			return nil, err
		}
		q[u.Key] = max(1, int(math.Round(w*minQuota)))
	}
	return q, nil
}

// MinQuotaFor is the MIN_QUOTA at which the quotas of units add up to an
// index of size n: the way to compare rules on indexes of the same size.
func MinQuotaFor(rule string, units []Unit, n int) (float64, error) {
	if len(units) == 0 {
		return 0, fmt.Errorf("no sites or segments to share an index between")
	}
	total := 0.0
	for _, u := range units {
		w, err := Weight(rule, u)
		if err != nil {
			return 0, err
		}
		total += w
	}
	return float64(n) / total, nil
}

// SortUnits orders units by key, for deterministic output.
func SortUnits(us []Unit) { sort.Slice(us, func(a, b int) bool { return us[a].Key < us[b].Key }) }
