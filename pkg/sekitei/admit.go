package sekitei

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/sekitei/crawlkit/pkg/boltstate"
	"github.com/sekitei/crawlkit/pkg/record"
	"github.com/sekitei/crawlkit/pkg/urlx"
)

// A Verdict is the loop's decision on one candidate URL.
type Verdict int

// Verdicts.
const (
	Admitted      Verdict = iota // within its segment's quota, or in no segment with a quota
	OverQuota                    // its segment's quota is used up
	RobotsBlocked                // its segment was tried and refused by robots.txt every time
)

func (v Verdict) String() string {
	switch v {
	case Admitted:
		return "admitted"
	case OverQuota:
		return "quota"
	case RobotsBlocked:
		return "robots"
	}
	return "verdict(" + strconv.Itoa(int(v)) + ")"
}

// SegmentUse is what the decision knows of a candidate's segment.
type SegmentUse struct {
	HasQuota bool // the segment has a quota entry
	Quota    int
	Used     int // fetch records in the segment, plus candidates admitted to it this turn
	Refused  int // fetch records in the segment refused by robots.txt
	// PerSite: the quota is the host's (quota rules equal and greedy), and
	// SiteUsed, the use of all the host's segments, is counted against it.
	PerSite  bool
	SiteUsed int
}

// Decide is the loop's filter rule. A segment tried robotsBlock times or
// more (robotsBlock > 0) and refused by robots.txt every time gets no
// candidate: they would only take the places of pages that can be fetched.
// Otherwise a candidate passes while its segment's use stays under its
// quota (its host's use under its host's quota, with PerSite), and always
// when its segment has no quota entry.
func Decide(u SegmentUse, robotsBlock int) Verdict {
	if robotsBlock > 0 && u.Used >= robotsBlock && u.Refused == u.Used {
		return RobotsBlocked
	}
	used := u.Used
	if u.PerSite {
		used = u.SiteUsed
	}
	if !u.HasQuota || used < u.Quota {
		return Admitted
	}
	return OverQuota
}

// An Admitter decides candidates against one state, or one state per shard,
// read-only: the candidates it admits count against their segments' quotas
// for the rest of its life (one turn), but nothing is written; the next
// Apply counts what was actually fetched.
type Admitter struct {
	n           int // shard count of the states
	byShard     map[int]*admitState
	robotsBlock int
}

type admitState struct {
	st       *State
	tx       *boltstate.Tx
	hasQuota bool
	perSite  bool // the state's rule gives its quota to the host
	hosts    map[string]*admitHost
}

type admitHost struct {
	info    *hostInfo // nil: no segments
	taken   []int     // candidates admitted per segment
	siteUse int       // fetch records of all its segments plus candidates admitted
}

// An Admission is the decision on one candidate.
type Admission struct {
	Verdict Verdict
	Host    string
	Segment int // -1 when the host has no segments in the states
}

// NewAdmitter decides against states opened read-only: one state of any
// shard, or states of distinct shards of the same count. A candidate of a
// shard without a state (or of a host without segments) passes, as it
// would with no state at all. It holds a read transaction on each state
// until Close.
func NewAdmitter(states []*State, robotsBlock int) (*Admitter, error) {
	a := &Admitter{n: 1, byShard: map[int]*admitState{}, robotsBlock: robotsBlock}
	if len(states) > 0 {
		a.n = 0
	}
	for _, st := range states {
		sh := st.Shard()
		n := max(sh.N, 1)
		if a.n != 0 && n != a.n {
			a.Close()
			return nil, fmt.Errorf("%s: state of shard %s, the others are of %d shards", st.path, shardString(sh), a.n)
		}
		a.n = n
		if a.byShard[sh.I] != nil {
			a.Close()
			return nil, fmt.Errorf("%s: a second state of shard %s", st.path, shardString(sh))
		}
		tx, err := st.db.Begin(false)
		if err != nil {
			a.Close()
			return nil, asStateError(err)
		}
		as := &admitState{st: st, tx: tx, hosts: map[string]*admitHost{}}
		a.byShard[sh.I] = as
		quotas, err := tx.Bucket(bucketMeta).Get(keyQuotas)
		if err != nil {
			a.Close()
			return nil, asStateError(err)
		}
		rule, err := tx.Bucket(bucketMeta).Get(keyQuotaRule)
		if err != nil {
			a.Close()
			return nil, asStateError(err)
		}
		q, _, _ := strings.Cut(string(quotas), "/")
		qn, _ := strconv.Atoi(q)
		as.hasQuota = QuotasOn(string(rule), qn)
		as.perSite = PerSiteQuota(string(rule))
	}
	return a, nil
}

// Close ends the read transactions (it does not close the states).
func (a *Admitter) Close() {
	for _, as := range a.byShard {
		as.tx.Rollback()
	}
}

// Admit decides one candidate. An admitted candidate counts against its
// segment's quota for the next ones. The error is a DataError for a
// candidate without a usable URL, a StateError for a corrupt state.
func (a *Admitter) Admit(r *record.Record) (ad Admission, err error) {
	host := record.RecordHost(r)
	if host == "" {
		return ad, r.Errorf("not an absolute http(s) URL: %q", clipURL(r.URL()))
	}
	ad.Host, ad.Segment = host, -1
	as := a.byShard[record.ShardOf(host, a.n)]
	if as == nil {
		return ad, nil
	}
	defer func() { err = asStateError(err) }()
	defer boltstate.Guard(as.st.path, &err)()
	ah := as.hosts[host]
	if ah == nil {
		info, err := as.st.hostInfo(as.tx, host)
		if err != nil {
			return ad, err
		}
		ah = &admitHost{}
		if info != nil && len(info.Segments) > 0 {
			ah.info, ah.taken = info, make([]int, len(info.Segments))
			for _, sg := range info.Segments {
				ah.siteUse += sg.Fetched
			}
		}
		as.hosts[host] = ah
	}
	if ah.info == nil {
		return ad, nil
	}
	if _, err := urlx.Split(r.URL()); err != nil {
		return ad, r.Errorf("%v: %q", err, clipURL(r.URL()))
	}
	i, err := ah.info.segmentOf(r.URL())
	if err != nil {
		return ad, &StateError{as.st.path, fmt.Errorf("host %q: %v", host, err)}
	}
	if i < 0 {
		return ad, nil
	}
	ad.Segment = i
	sg := ah.info.Segments[i]
	ad.Verdict = Decide(SegmentUse{HasQuota: as.hasQuota, Quota: sg.Quota, Used: sg.Fetched + ah.taken[i], Refused: sg.Refused,
		PerSite: as.perSite, SiteUsed: ah.siteUse}, a.robotsBlock)
	if ad.Verdict == Admitted {
		ah.taken[i]++
		ah.siteUse++
	}
	return ad, nil
}

func clipURL(u string) string {
	if len(u) > 200 {
		return u[:200] + "..."
	}
	return u
}
