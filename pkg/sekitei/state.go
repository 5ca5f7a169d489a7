package sekitei

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/sekitei/crawlkit/pkg/boltstate"
	"github.com/sekitei/crawlkit/pkg/record"
	"github.com/sekitei/crawlkit/pkg/urlx"
)

// StateFormat and StateVersion identify a crawl state file; a state of
// another format or version is refused. Version 2 added a checksum to
// every value.
const (
	StateFormat  = "sekitei-state"
	StateVersion = 2
)

// Buckets and meta keys of a state. URLs are keyed host, NUL, URL so that
// one host's URLs are one contiguous key range: re-clustering a host reads
// that range and nothing else.
var (
	bucketMeta  = []byte("meta")
	bucketHosts = []byte("hosts") // host → hostInfo
	bucketURLs  = []byte("urls")  // host \x00 URL → urlValue
	bucketGood  = []byte("good")  // host \x00 URL of a good URL not known yet

	keyFormat     = []byte("format")
	keyVersion    = []byte("version")
	keyShard      = []byte("shard")
	keyBatch      = []byte("batch")
	keyGoodDigest = []byte("good_digest")
	keyQuotas     = []byte("quotas")
	keyQuotaRule  = []byte("quota_rule") // absent in states made before the rules: share
)

// urlGood marks a good URL (a QLink) in a urlValue's flags.
const urlGood = 1

// lockTimeout is how long Open waits for another process's lock on a state.
const lockTimeout = 30 * time.Second

// StateOptions configure a crawl state.
type StateOptions struct {
	// Shard keeps only this shard's hosts (record.ShardOf); the zero Shard
	// keeps all. A state remembers its shard and refuses another.
	Shard record.Shard
	// SiteQuota and MinQuota share a host's quota between its segments
	// (Site.SetQuotas). SiteQuota 0 gives segments no quota: Admit then
	// passes every candidate that robots.txt has not blocked.
	SiteQuota, MinQuota int
	// QuotaRule names the rule that sets the quotas (QuotaRuleNames; empty:
	// share). The state records it: an update under another rule sets
	// every host's quotas anew (ApplyStats.RuleChangedFrom); a read-only
	// open asking for a rule refuses a state of another.
	QuotaRule string
	// Regrow re-clusters a host once its known URLs have grown by this
	// share since its last clustering (default 0.25).
	Regrow float64
	// Build tunes the segments (its SiteQuota and MinQuota are ignored).
	Build Options
	// ReadOnly opens an existing state for reading (Admitter); a missing
	// one is then an error.
	ReadOnly bool
}

// A State is sekitei's memory of a crawl that lives for months, in one
// bbolt file: per host its known URLs (each with its good mark and how
// often it was fetched and refused by robots.txt), its segments with their
// counts and quotas, and the last batch applied. See Apply.
type State struct {
	path string
	db   *boltstate.DB
	opt  StateOptions
}

// A StateError is a state that cannot be used: corrupt, truncated, of
// another format, version or shard. Its message names the path.
type StateError struct {
	Path string
	Err  error
}

func (e *StateError) Error() string { return fmt.Sprintf("%s: %v", e.Path, e.Err) }
func (e *StateError) Unwrap() error { return e.Err }

// asStateError makes a damaged file's error (boltstate, which names the
// path already) a StateError.
func asStateError(err error) error {
	var be *boltstate.Error
	if errors.As(err, &be) {
		return &StateError{be.Path, errors.New(be.What)}
	}
	return err
}

// OpenState opens the state at path, creating it empty when it is missing
// (unless opt.ReadOnly). It checks format, version and shard.
func OpenState(path string, opt StateOptions) (st *State, err error) {
	if opt.Regrow <= 0 {
		opt.Regrow = 0.25
	}
	switch {
	case !opt.ReadOnly:
		if err := CheckQuotaRule(opt.QuotaRule, opt.MinQuota); err != nil {
			return nil, err
		}
	case opt.QuotaRule != "":
		if err := checkRuleName(opt.QuotaRule); err != nil {
			return nil, err
		}
	}
	fi, statErr := os.Stat(path)
	switch {
	case errors.Is(statErr, os.ErrNotExist) && !opt.ReadOnly:
		if err := createState(path, opt.Shard); err != nil {
			return nil, err
		}
	case statErr != nil:
		return nil, statErr
	case fi.IsDir():
		return nil, &StateError{path, errors.New("is a directory, not a state file")}
	}
	db, err := boltstate.Open(path, boltstate.Options{Kind: "sekitei state", ReadOnly: opt.ReadOnly, Timeout: lockTimeout,
		Buckets: []string{string(bucketHosts), string(bucketURLs), string(bucketGood), string(bucketMeta)}})
	if err != nil {
		var be *boltstate.Error
		if errors.As(err, &be) {
			return nil, &StateError{path, errors.New(be.What)}
		}
		if errors.Is(err, boltstate.ErrLocked) {
			return nil, &StateError{path, boltstate.ErrLocked}
		}
		return nil, &StateError{path, fmt.Errorf("not a readable state: %v", err)}
	}
	st = &State{path: path, db: db, opt: opt}
	if err := db.View(st.checkMeta); err != nil {
		db.Close()
		return nil, asStateError(err)
	}
	return st, nil
}

// createState writes an empty state beside path and renames it into place,
// so that a crash never leaves a half-made state at path.
func createState(path string, shard record.Shard) error {
	tmp := path + ".new"
	os.Remove(tmp)
	db, err := boltstate.Open(tmp, boltstate.Options{Kind: "sekitei state", Timeout: lockTimeout})
	if err != nil {
		return err
	}
	err = db.Update(func(tx *boltstate.Tx) error {
		for _, b := range [][]byte{bucketHosts, bucketURLs, bucketGood} {
			if _, err := tx.CreateBucketIfNotExists(b); err != nil {
				return err
			}
		}
		m, err := tx.CreateBucketIfNotExists(bucketMeta)
		if err != nil {
			return err
		}
		for k, v := range map[string]string{
			string(keyFormat): StateFormat, string(keyVersion): strconv.Itoa(StateVersion), string(keyShard): shardString(shard),
		} {
			if err := m.Put([]byte(k), []byte(v)); err != nil {
				return err
			}
		}
		return nil
	})
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	return boltstate.SyncDir(filepath.Dir(path))
}

func shardString(s record.Shard) string {
	if s.N <= 1 {
		return "0/1"
	}
	return s.String()
}

func (s *State) checkMeta(tx *boltstate.Tx) error {
	m := tx.Bucket(bucketMeta)
	if m == nil || tx.Bucket(bucketHosts) == nil || tx.Bucket(bucketURLs) == nil || tx.Bucket(bucketGood) == nil {
		return &StateError{s.path, errors.New("not a sekitei state (buckets missing)")}
	}
	// Version 1 stored its values bare: tell it by its version value.
	if raw := string(m.Raw(keyVersion)); raw == "1" {
		return &StateError{s.path, fmt.Errorf("state version %s, this sekitei reads version %d", raw, StateVersion)}
	}
	f, err1 := m.Get(keyFormat)
	v, err2 := m.Get(keyVersion)
	shard, err3 := m.Get(keyShard)
	if err := errors.Join(err1, err2, err3); err != nil {
		return err
	}
	if string(f) != StateFormat {
		return &StateError{s.path, fmt.Errorf("format %q, want %q", f, StateFormat)}
	}
	if string(v) != strconv.Itoa(StateVersion) {
		return &StateError{s.path, fmt.Errorf("state version %s, this sekitei reads version %d", v, StateVersion)}
	}
	if !s.opt.ReadOnly {
		if sh := string(shard); sh != shardString(s.opt.Shard) {
			return &StateError{s.path, fmt.Errorf("state of shard %s, asked for shard %s", sh, shardString(s.opt.Shard))}
		}
	} else {
		sh, err := record.ParseShard(string(shard))
		if err != nil {
			return &StateError{s.path, fmt.Errorf("bad shard in meta: %v", err)}
		}
		s.opt.Shard = sh
		rule, err := m.Get(keyQuotaRule)
		if err != nil {
			return err
		}
		if want := s.opt.QuotaRule; want != "" && ruleOrDefault(string(rule)) != want {
			return &StateError{s.path, fmt.Errorf("quotas set by rule %s, asked for rule %s: an update with the new rule (sekitei update --quota-rule %s) sets them anew",
				ruleOrDefault(string(rule)), want, want)}
		}
	}
	return nil
}

// Path returns the state's file name.
func (s *State) Path() string { return s.path }

// Shard returns the state's shard.
func (s *State) Shard() record.Shard { return s.opt.Shard }

// Close closes the state.
func (s *State) Close() error { return s.db.Close() }

// Compact rewrites the state without its free pages if they have grown to
// a quarter of it (boltstate.CompactIfSparse); the writers call it after a
// batch. A failure leaves the state as it was.
func (s *State) Compact() (boltstate.Compaction, error) { return s.db.CompactIfSparse() }

// LastBatch returns the ID of the last batch applied ("" for none).
func (s *State) LastBatch() (id string, err error) {
	err = s.db.View(func(tx *boltstate.Tx) error {
		v, err := tx.Bucket(bucketMeta).Get(keyBatch)
		id = string(v)
		return err
	})
	return id, asStateError(err)
}

// A StateSegment is one segment of a host in a state, with the quota use
// counted from fetch records: Fetched records of its URLs, Refused of them
// refused by robots.txt.
type StateSegment struct {
	Regex            string
	URLs, Good       int
	Quota            int
	Fetched, Refused int
}

// hostInfo is what a state keeps per host besides its URLs.
type hostInfo struct {
	Known       int // distinct known URLs
	ClusteredAt int // Known when the segments were last built
	Segments    []StateSegment

	site *Site // compiled Segments, built on demand
}

func (h *hostInfo) encode() []byte {
	b := binary.AppendUvarint(nil, uint64(h.Known))
	b = binary.AppendUvarint(b, uint64(h.ClusteredAt))
	b = binary.AppendUvarint(b, uint64(len(h.Segments)))
	for _, sg := range h.Segments {
		b = binary.AppendUvarint(b, uint64(len(sg.Regex)))
		b = append(b, sg.Regex...)
		for _, v := range []int{sg.URLs, sg.Good, sg.Quota, sg.Fetched, sg.Refused} {
			b = binary.AppendUvarint(b, uint64(v))
		}
	}
	return b
}

func decodeHostInfo(b []byte) (*hostInfo, error) {
	r := uvarintReader{b: b}
	h := &hostInfo{Known: r.int(), ClusteredAt: r.int()}
	n := r.int()
	if r.err == nil && n > len(b) {
		r.err = errors.New("segment count beyond the record")
	}
	for i := 0; i < n && r.err == nil; i++ {
		l := r.int()
		if r.err == nil && l > len(r.b) {
			r.err = errors.New("regex beyond the record")
			break
		}
		sg := StateSegment{Regex: string(r.b[:l])}
		r.b = r.b[l:]
		for _, p := range []*int{&sg.URLs, &sg.Good, &sg.Quota, &sg.Fetched, &sg.Refused} {
			*p = r.int()
		}
		h.Segments = append(h.Segments, sg)
	}
	if r.err == nil && len(r.b) != 0 {
		r.err = errors.New("trailing bytes")
	}
	return h, r.err
}

type uvarintReader struct {
	b   []byte
	err error
}

func (r *uvarintReader) int() int {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 || v > math.MaxInt32*1024 {
		r.err = errors.New("bad number")
		return 0
	}
	r.b = r.b[n:]
	return int(v)
}

// compiled returns the host's segments as a Site that can match URLs.
func (h *hostInfo) compiled() (*Site, error) {
	if h.site != nil || len(h.Segments) == 0 {
		return h.site, nil
	}
	site := &Site{}
	for i, sg := range h.Segments {
		m, err := newMatcher(sg.Regex)
		if err != nil {
			return nil, fmt.Errorf("segment %d: regex %q does not compile: %v", i, sg.Regex, err)
		}
		site.Segments = append(site.Segments, Segment{ID: i, Regex: sg.Regex, m: m})
	}
	h.site = site
	return site, nil
}

// segmentOf returns the index of the URL's segment, or -1.
func (h *hostInfo) segmentOf(rawURL string) (int, error) {
	site, err := h.compiled()
	if err != nil || site == nil {
		return -1, err
	}
	p, err := urlx.Split(rawURL)
	if err != nil {
		return -1, nil
	}
	if i := site.match(subjectOf(p)); i < len(site.Segments) {
		return i, nil
	}
	return -1, nil
}

// urlValue is what a state keeps per known URL.
type urlValue struct {
	flags            byte
	fetched, refused int
}

func (v urlValue) encode() []byte {
	b := []byte{v.flags}
	b = binary.AppendUvarint(b, uint64(v.fetched))
	return binary.AppendUvarint(b, uint64(v.refused))
}

func decodeURLValue(b []byte) (urlValue, error) {
	if len(b) == 0 {
		return urlValue{}, errors.New("empty URL value")
	}
	r := uvarintReader{b: b[1:]}
	v := urlValue{flags: b[0], fetched: r.int(), refused: r.int()}
	if r.err == nil && len(r.b) != 0 {
		r.err = errors.New("trailing bytes")
	}
	return v, r.err
}

func urlKey(host, u string) []byte {
	k := make([]byte, 0, len(host)+1+len(u))
	k = append(k, host...)
	k = append(k, 0)
	return append(k, u...)
}

// GoodURLs are the URLs users visit (QLinks), as read from good.txt. Digest
// identifies the list: an unchanged list is not marked again.
type GoodURLs struct {
	URLs   []string
	Digest string
}

// ApplyStats tells what a batch did to a state.
type ApplyStats struct {
	Skipped     bool // the batch was the last one applied: nothing done
	Records     int  // fetch records of the state's shard
	NewURLs     int  // URLs the state did not know
	Hosts       int  // hosts touched
	Reclustered int  // hosts whose segments were built anew
	BadURLs     int  // fetched URLs or links that are not absolute http(s) URLs
	GoodMarked  int  // known URLs newly marked good
	// RuleChangedFrom is the quota rule the state had before this batch,
	// when the batch's options named another: every host's quotas were
	// then set anew under the new rule.
	RuleChangedFrom string
}

// hostDelta is what a batch brings to one host.
type hostDelta struct {
	urls map[string]*urlDelta
}

// urlDelta is what a batch brings to one URL: its fetch records and
// robots.txt refusals.
type urlDelta struct {
	fetched, refused int
}

// Apply adds one batch of fetch records to the state, in one transaction
// with the batch ID: each fetched URL and its "links" become known URLs of
// their hosts; each record counts one fetch of its URL's segment, and one
// robots.txt refusal when its "error" starts with "robots:". A host is
// re-clustered when it has no segments yet or its known URLs have grown by
// Regrow since its last clustering; its segments' counts are then recounted
// from its own URLs in the state. Otherwise only the batch's URLs are
// matched. good, when not nil and changed since the last batch, marks its
// URLs good (URLs not known yet are marked when they come). Applying the
// batch ID last applied again does nothing (Skipped); an ID that sorts
// before it is refused.
func (s *State) Apply(batchID string, recs []*record.Record, good *GoodURLs) (stats ApplyStats, err error) {
	if s.opt.ReadOnly {
		return stats, errors.New("state opened read-only")
	}
	if batchID == "" {
		return stats, errors.New("empty batch ID")
	}
	err = s.db.Update(func(tx *boltstate.Tx) error {
		meta := tx.Bucket(bucketMeta)
		lastV, err := meta.Get(keyBatch)
		if err != nil {
			return err
		}
		last := string(lastV)
		if last == batchID {
			stats.Skipped = true
			return nil
		}
		if last != "" && batchID < last {
			return &StateError{s.path, fmt.Errorf("batch %s sorts before the last batch applied, %s", batchID, last)}
		}
		deltas := map[string]*hostDelta{}
		add := func(host, u string) *urlDelta {
			hd := deltas[host]
			if hd == nil {
				hd = &hostDelta{urls: map[string]*urlDelta{}}
				deltas[host] = hd
			}
			d := hd.urls[u]
			if d == nil {
				d = &urlDelta{}
				hd.urls[u] = d
			}
			return d
		}
		var links []string
		for _, r := range recs {
			host := record.RecordHost(r)
			if host == "" || !s.keeps(host) {
				if host == "" {
					stats.BadURLs++
				}
				continue
			}
			stats.Records++
			d := add(host, r.URL())
			d.fetched++
			if e, _ := r.String("error"); strings.HasPrefix(e, "robots:") {
				d.refused++
			}
			links = links[:0]
			if _, err := r.Decode("links", &links); err != nil {
				stats.BadURLs++
			}
			for _, l := range links {
				lh, err := urlx.Host(l)
				if err != nil {
					stats.BadURLs++
					continue
				}
				if s.keeps(lh) {
					add(lh, l)
				}
			}
		}
		marked, err := s.markGood(tx, good)
		if err != nil {
			return err
		}
		stats.GoodMarked += marked
		quotas, err := meta.Get(keyQuotas)
		if err != nil {
			return err
		}
		oldRule, err := meta.Get(keyQuotaRule)
		if err != nil {
			return err
		}
		ruleChanged := ruleOrDefault(string(oldRule)) != ruleOrDefault(s.opt.QuotaRule)
		if ruleChanged && len(last) > 0 {
			stats.RuleChangedFrom = ruleOrDefault(string(oldRule))
		}
		quotasChanged := string(quotas) != s.quotaKey() || ruleChanged || oldRule == nil
		hosts := make([]string, 0, len(deltas))
		for h := range deltas {
			hosts = append(hosts, h)
		}
		sort.Strings(hosts)
		for _, h := range hosts {
			n, g, re, err := s.applyHost(tx, h, deltas[h])
			if err != nil {
				return err
			}
			stats.NewURLs += n
			stats.GoodMarked += g
			if re {
				stats.Reclustered++
			}
		}
		stats.Hosts = len(hosts)
		if quotasChanged {
			if err := s.requota(tx); err != nil {
				return err
			}
			if err := meta.Put(keyQuotas, []byte(s.quotaKey())); err != nil {
				return err
			}
			if err := meta.Put(keyQuotaRule, []byte(ruleOrDefault(s.opt.QuotaRule))); err != nil {
				return err
			}
		}
		return meta.Put(keyBatch, []byte(batchID))
	})
	return stats, asStateError(err)
}

func (s *State) keeps(host string) bool {
	return s.opt.Shard.N <= 1 || record.ShardOf(host, s.opt.Shard.N) == s.opt.Shard.I
}

func (s *State) quotaKey() string { return fmt.Sprintf("%d/%d", s.opt.SiteQuota, s.opt.MinQuota) }

// markGood marks the good URLs of the state's shard when the list changed:
// known URLs in place (their hosts' segment counts and quotas follow), the
// others in the good bucket for when they
// come. Removing a URL from the list does not unmark it.
func (s *State) markGood(tx *boltstate.Tx, good *GoodURLs) (int, error) {
	meta := tx.Bucket(bucketMeta)
	if good == nil {
		return 0, nil
	}
	if d, err := meta.Get(keyGoodDigest); err != nil || string(d) == good.Digest {
		return 0, err
	}
	urls, pending := tx.Bucket(bucketURLs), tx.Bucket(bucketGood)
	touched := map[string][]string{}
	for _, u := range good.URLs {
		h, err := urlx.Host(u)
		if err != nil || !s.keeps(h) {
			continue
		}
		k := urlKey(h, u)
		raw, err := urls.Get(k)
		if err != nil {
			return 0, err
		}
		if raw == nil {
			if err := pending.Put(k, []byte{1}); err != nil {
				return 0, err
			}
			continue
		}
		v, err := decodeURLValue(raw)
		if err != nil {
			return 0, &StateError{s.path, fmt.Errorf("URL %q: %v", u, err)}
		}
		if v.flags&urlGood != 0 {
			continue
		}
		v.flags |= urlGood
		if err := urls.Put(k, v.encode()); err != nil {
			return 0, err
		}
		touched[h] = append(touched[h], u)
	}
	marked := 0
	for h, us := range touched {
		marked += len(us)
		info, err := s.hostInfo(tx, h)
		if err != nil || info == nil {
			return 0, err
		}
		for _, u := range us {
			if i, err := info.segmentOf(u); err != nil {
				return 0, &StateError{s.path, fmt.Errorf("host %q: %v", h, err)}
			} else if i >= 0 {
				info.Segments[i].Good++
			}
		}
		s.setQuotas(info)
		if err := tx.Bucket(bucketHosts).Put([]byte(h), info.encode()); err != nil {
			return 0, err
		}
	}
	return marked, meta.Put(keyGoodDigest, []byte(good.Digest))
}

func (s *State) hostInfo(tx *boltstate.Tx, host string) (*hostInfo, error) {
	raw, err := tx.Bucket(bucketHosts).Get([]byte(host))
	if raw == nil || err != nil {
		return nil, err
	}
	info, err := decodeHostInfo(raw)
	if err != nil {
		return nil, &StateError{s.path, fmt.Errorf("host %q: corrupt record: %v", host, err)}
	}
	return info, nil
}

// applyHost applies one host's part of a batch and returns how many URLs
// were new, how many of them were waiting to be marked good, and whether the
// host was re-clustered.
func (s *State) applyHost(tx *boltstate.Tx, host string, hd *hostDelta) (newURLs, goodURLs int, recluster bool, err error) {
	info, err := s.hostInfo(tx, host)
	if err != nil {
		return 0, 0, false, err
	}
	if info == nil {
		info = &hostInfo{}
	}
	urls, pending := tx.Bucket(bucketURLs), tx.Bucket(bucketGood)
	keys := make([]string, 0, len(hd.urls))
	for u := range hd.urls {
		keys = append(keys, u)
	}
	sort.Strings(keys) // bbolt writes in key order fastest
	type change struct {
		u     string
		isNew bool
		good  bool
		d     *urlDelta
	}
	changes := make([]change, 0, len(keys))
	for _, u := range keys {
		d := hd.urls[u]
		k := urlKey(host, u)
		raw, err := urls.Get(k)
		if err != nil {
			return 0, 0, false, err
		}
		var v urlValue
		isNew := raw == nil
		if isNew {
			p, err := pending.Get(k)
			if err != nil {
				return 0, 0, false, err
			}
			if p != nil {
				v.flags |= urlGood
				goodURLs++
				if err := pending.Delete(k); err != nil {
					return 0, 0, false, err
				}
			}
			info.Known++
		} else if v, err = decodeURLValue(raw); err != nil {
			return 0, 0, false, &StateError{s.path, fmt.Errorf("URL %q: %v", u, err)}
		}
		if isNew || d.fetched > 0 {
			v.fetched += d.fetched
			v.refused += d.refused
			if err := urls.Put(k, v.encode()); err != nil {
				return 0, 0, false, err
			}
		}
		changes = append(changes, change{u, isNew, v.flags&urlGood != 0, d})
	}
	for _, c := range changes {
		if c.isNew {
			newURLs++
		}
	}
	recluster = newURLs > 0 && (len(info.Segments) == 0 ||
		float64(info.Known) >= float64(info.ClusteredAt)*(1+s.opt.Regrow))
	if recluster {
		if err := s.recluster(tx, host, info); err != nil {
			return 0, 0, false, err
		}
	} else if len(info.Segments) > 0 {
		for _, c := range changes {
			i, err := info.segmentOf(c.u)
			if err != nil {
				return 0, 0, false, &StateError{s.path, fmt.Errorf("host %q: %v", host, err)}
			}
			if i < 0 {
				continue
			}
			sg := &info.Segments[i]
			if c.isNew {
				sg.URLs++
				if c.good {
					sg.Good++
				}
			}
			sg.Fetched += c.d.fetched
			sg.Refused += c.d.refused
		}
	}
	s.setQuotas(info)
	return newURLs, goodURLs, recluster, tx.Bucket(bucketHosts).Put([]byte(host), info.encode())
}

// recluster builds the host's segments anew from all its known URLs (one
// key range of the state) and recounts their use from the URLs' fetches.
func (s *State) recluster(tx *boltstate.Tx, host string, info *hostInfo) error {
	prefix := urlKey(host, "")
	var examples []Example
	var values []urlValue
	c := tx.Bucket(bucketURLs).Cursor()
	for k, raw := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, raw = c.Next() {
		v, err := decodeURLValue(raw)
		if err != nil {
			return &StateError{s.path, fmt.Errorf("URL %q: %v", k[len(prefix):], err)}
		}
		examples = append(examples, Example{URL: string(k[len(prefix):]), Good: v.flags&urlGood != 0})
		values = append(values, v)
	}
	if err := c.Err(); err != nil {
		return err
	}
	info.ClusteredAt = len(examples)
	info.Known = len(examples)
	info.Segments, info.site = nil, nil
	site, err := Build(host, examples, s.opt.Build)
	if errors.Is(err, ErrNoURLs) {
		return nil // no URL urlfeat takes: no segments, tried again when the host grows
	}
	if err != nil {
		return err
	}
	for _, sg := range site.Segments {
		info.Segments = append(info.Segments, StateSegment{Regex: sg.Regex, URLs: sg.URLs, Good: sg.Good})
	}
	info.site = site
	for i, v := range values {
		if v.fetched == 0 {
			continue
		}
		p, err := urlx.Split(examples[i].URL)
		if err != nil {
			continue
		}
		if j := site.match(subjectOf(p)); j < len(site.Segments) {
			info.Segments[j].Fetched += v.fetched
			info.Segments[j].Refused += v.refused
		}
	}
	return nil
}

// setQuotas sets the quotas of the host's segments by the state's rule
// (RuleQuotas; OpenState checked the rule and MIN_QUOTA).
func (s *State) setQuotas(info *hostInfo) {
	q, err := RuleQuotas(s.opt.QuotaRule, info.Segments, s.opt.SiteQuota, s.opt.MinQuota)
	if err != nil {
		q = make([]int, len(info.Segments))
	}
	for i := range info.Segments {
		info.Segments[i].Quota = q[i]
	}
}

// QuotaRule returns the quota rule the state's quotas were set by (share
// for a state made before the rules could be chosen).
func (s *State) QuotaRule() (rule string, err error) {
	err = s.db.View(func(tx *boltstate.Tx) error {
		v, err := tx.Bucket(bucketMeta).Get(keyQuotaRule)
		rule = ruleOrDefault(string(v))
		return err
	})
	return rule, asStateError(err)
}

// requota sets every host's quotas anew, after the quota options changed:
// a pass over the hosts (not their URLs), only then.
func (s *State) requota(tx *boltstate.Tx) error {
	b := tx.Bucket(bucketHosts)
	type upd struct {
		k, v []byte
	}
	var ups []upd
	err := b.ForEach(func(k, raw []byte) error {
		info, err := decodeHostInfo(raw)
		if err != nil {
			return &StateError{s.path, fmt.Errorf("host %q: corrupt record: %v", k, err)}
		}
		s.setQuotas(info)
		ups = append(ups, upd{append([]byte(nil), k...), info.encode()})
		return nil
	})
	if err != nil {
		return err
	}
	for _, u := range ups {
		if err := b.Put(u.k, u.v); err != nil {
			return err
		}
	}
	return nil
}

// HostSegments returns a host's segments with their counts and quotas (nil
// for a host without segments) and its known URLs.
func (s *State) HostSegments(host string) (segs []StateSegment, known int, err error) {
	err = s.db.View(func(tx *boltstate.Tx) error {
		info, err := s.hostInfo(tx, host)
		if err != nil || info == nil {
			return err
		}
		segs, known = info.Segments, info.Known
		return nil
	})
	return segs, known, asStateError(err)
}

// Hosts returns the hosts of the state in order. It reads every host's
// record: for tests and inspection, not for a turn of the loop.
func (s *State) Hosts() (hosts []string, err error) {
	err = s.db.View(func(tx *boltstate.Tx) error {
		return tx.Bucket(bucketHosts).ForEach(func(k, _ []byte) error {
			hosts = append(hosts, string(k))
			return nil
		})
	})
	return hosts, asStateError(err)
}
