package sekitei

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/sekitei/crawlkit/pkg/crawlorder"
)

// QuotaShare is the online quota rule sekitei had before the lecture's
// rules could be chosen, and the default: a site quota shared between the
// host's segments, MIN_QUOTA each and the rest in proportion to their good
// URLs (Site.SetQuotas).
const QuotaShare = "share"

// QuotaRuleNames lists the quota rules of the online path: share (the
// default) and the lecture's, named as 'sekitei evaluate --quota' names
// them (crawlorder.QuotaRules).
var QuotaRuleNames = append([]string{QuotaShare}, crawlorder.QuotaRules...)

// CheckQuotaRule reports whether rule (empty: share) is a rule of the online
// path, and whether minQuota suits it: the lecture's rules multiply
// MIN_QUOTA, so it must be above 0 for them.
func CheckQuotaRule(rule string, minQuota int) error {
	rule = ruleOrDefault(rule)
	if err := checkRuleName(rule); err != nil {
		return err
	}
	if rule != QuotaShare && rule != crawlorder.QuotaNone && minQuota <= 0 {
		return fmt.Errorf("quota rule %s: MIN_QUOTA %d: want a number of pages above 0 (the rule multiplies it)", rule, minQuota)
	}
	return nil
}

// checkRuleName reports whether rule names a rule of the online path.
func checkRuleName(rule string) error {
	if !slices.Contains(QuotaRuleNames, rule) {
		return fmt.Errorf("quota rule %q: want one of %s", rule, strings.Join(QuotaRuleNames, ", "))
	}
	return nil
}

func ruleOrDefault(rule string) string {
	if rule == "" {
		return QuotaShare
	}
	return rule
}

// PerSiteQuota reports whether rule gives its quota to the whole host
// (equal, greedy), so that all the host's segments draw on one quota.
func PerSiteQuota(rule string) bool {
	rule = ruleOrDefault(rule)
	return rule != QuotaShare && rule != crawlorder.QuotaNone && !crawlorder.PerSegmentRule(rule)
}

// QuotasOn reports whether the state's rule and site quota give segments
// quotas at all: share with a site quota above 0, or one of the lecture's
// rules other than none (their quotas come from MIN_QUOTA alone).
func QuotasOn(rule string, siteQuota int) bool {
	switch ruleOrDefault(rule) {
	case QuotaShare:
		return siteQuota > 0
	case crawlorder.QuotaNone:
		return false
	}
	return true
}

// RuleQuotas returns the quota of each of a host's segments (given by
// their known URLs and good URLs) under rule:
//
//   - share: Site.SetQuotas(siteQuota, minQuota);
//   - none: no quota (all 0; QuotasOn is false);
//   - equal, greedy: the host's quota by crawlorder.Quotas, with the
//     host's good URLs as its QLinks and its visits; every segment carries
//     the host's quota, and the admitter counts the host's use against it
//     (PerSiteQuota);
//   - visits, segments: each segment's quota by crawlorder.Quotas, with its
//     good URLs as QLinks and visits.
//
// The state keeps a good mark per URL, not a visit count: a good URL counts
// as one visit. siteQuota is used by share only.
func RuleQuotas(rule string, segs []StateSegment, siteQuota, minQuota int) ([]int, error) {
	rule = ruleOrDefault(rule)
	if err := CheckQuotaRule(rule, minQuota); err != nil {
		return nil, err
	}
	q := make([]int, len(segs))
	if len(segs) == 0 {
		return q, nil
	}
	switch {
	case rule == QuotaShare:
		site := &Site{Segments: make([]Segment, len(segs))}
		for i, sg := range segs {
			site.Segments[i] = Segment{URLs: sg.URLs, Good: sg.Good}
		}
		site.SetQuotas(siteQuota, minQuota)
		for i := range segs {
			q[i] = site.Segments[i].Quota
		}
	case rule == crawlorder.QuotaNone:
	case PerSiteQuota(rule):
		good := 0
		for _, sg := range segs {
			good += sg.Good
		}
		m, err := crawlorder.Quotas(rule, []crawlorder.Unit{{Key: "site", QLinks: good, Visits: float64(good)}}, float64(minQuota))
		if err != nil {
			return nil, err
		}
		for i := range q {
			q[i] = m["site"]
		}
	default:
		units := make([]crawlorder.Unit, len(segs))
		for i, sg := range segs {
			units[i] = crawlorder.Unit{Key: strconv.Itoa(i), QLinks: sg.Good, Visits: float64(sg.Good)}
		}
		m, err := crawlorder.Quotas(rule, units, float64(minQuota))
		if err != nil {
			return nil, err
		}
		for i := range q {
			q[i] = m[strconv.Itoa(i)]
		}
	}
	return q, nil
}
