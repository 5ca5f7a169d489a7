package recrawlcli

import (
	"bufio"
	"cmp"
	"errors"
	"fmt"
	"math"
	"os"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/sekitei/crawlkit/pkg/clikit"
	"github.com/sekitei/crawlkit/pkg/record"
	"github.com/sekitei/crawlkit/pkg/recrawl"
)

func estimateCommand() *cli.Command {
	return &cli.Command{
		Name:      "estimate",
		Usage:     "change rates from fetch histories or fetch/change counts",
		UsageText: "recrawl estimate [--prior-rate R] [--prior-days D] [--min-history N] [FILE...]",
		Description: `Reads either fetch records (url, fetched_at, digest; several per URL, any
order), or page records with counts: "fetches", "changes" and the interval
between fetches ("interval" in seconds, or "first_fetch" and "last_fetch").
Writes one record per URL, in order of first appearance: the latest fetch
record with "change_rate" (per day), "fetches", "changes" and "last_fetch".

A change is a digest different from the previous fetch's. With regular
intervals the estimator of Cho and Garcia-Molina (2003),
r = -ln((n - X + 0.5)/(n + 0.5))/I, which stays unbiased where the naive X/(nI)
saturates; with irregular intervals maximum likelihood; with fewer than
--min-history intervals, or no change or a change at every fetch, the
posterior mode under a Gamma prior worth --prior-days days at --prior-rate.
Fetch records without a digest but with "error" (failed fetches) are skipped.
Memory grows with the URLs and fetches (about 200 bytes a URL), not with the
size of the records: the record to write for each URL waits in a temporary
file (in $TMPDIR), removed at exit.

Example:
   $ cat fetches.ndjson
   {"url":"https://a.example/","fetched_at":"2026-11-01T00:00:00Z","digest":"sha1:AAA"}
   {"url":"https://a.example/","fetched_at":"2026-11-02T00:00:00Z","digest":"sha1:BBB"}
   ...
   $ recrawl estimate fetches.ndjson
   {"url":"https://a.example/","fetched_at":"2026-11-08T00:00:00Z","digest":"sha1:GGG","change_rate":0.74,"fetches":8,"changes":4,"last_fetch":"2026-11-08T00:00:00Z"}`,
		Flags: append(clikit.InputFlags(),
			&cli.Float64Flag{Name: "prior-rate", Value: 0.2, Usage: "prior change `RATE` per day for pages with little history"},
			&cli.Float64Flag{Name: "prior-days", Value: 7, Usage: "weight of the prior in days of observation"},
			&cli.IntFlag{Name: "min-history", Value: 5, Usage: "fetch intervals needed before the data alone decide"},
		),
		Action: estimate,
	}
}

// fetchObs is one fetch, 24 bytes: the time as seconds and nanoseconds
// since 1970 (any time.Time fits), the digest's hash and the URL.
type fetchObs struct {
	sec    int64
	digest uint64
	nsec   int32
	page   int32 // the URL's index in order of first appearance
}

func (o *fetchObs) time() time.Time { return time.Unix(o.sec, int64(o.nsec)).UTC() }

func (o *fetchObs) compare(b *fetchObs) int {
	if c := cmp.Compare(o.sec, b.sec); c != 0 {
		return c
	}
	return cmp.Compare(o.nsec, b.nsec)
}

// estPage is what estimate keeps of one URL while it reads, besides its
// fetches: where the record to write out (the latest fetch record, or the
// counts record) lies in the spool file. Records are not kept in memory,
// so memory grows with URLs and fetches, not with the size of records.
type estPage struct {
	off    int64 // the record's line in the spool
	size   int32
	latest int32 // the index of the latest fetch in the fetches, -1 before one
	counts bool
	rate   float64
	n, x   int32
}

// spool holds records on disk, in an unlinked temporary file, to be read
// back by offset.
type spool struct {
	f   *os.File
	w   *bufio.Writer
	off int64
	buf []byte
}

func newSpool() (*spool, error) {
	f, err := os.CreateTemp("", "recrawl-estimate-*")
	if err != nil {
		return nil, err
	}
	os.Remove(f.Name()) // gone at exit whatever happens; the open file stays
	return &spool{f: f, w: bufio.NewWriterSize(f, 256<<10)}, nil
}

// put writes r's JSON and returns where it lies.
func (s *spool) put(r *record.Record) (int64, int32, error) {
	s.buf = r.AppendJSON(s.buf[:0])
	if len(s.buf) > math.MaxInt32 {
		return 0, 0, errors.New("record too long")
	}
	if _, err := s.w.Write(s.buf); err != nil {
		return 0, 0, fmt.Errorf("spool: %w", err)
	}
	off := s.off
	s.off += int64(len(s.buf))
	return off, int32(len(s.buf)), nil
}

// get reads back the record at off into r.
func (s *spool) get(r *record.Record, off int64, size int32) error {
	if cap(s.buf) < int(size) {
		s.buf = make([]byte, size)
	}
	s.buf = s.buf[:size]
	if _, err := s.f.ReadAt(s.buf, off); err != nil {
		return fmt.Errorf("spool: %w", err)
	}
	return record.ParseView(r, s.buf)
}

func estimate(c *cli.Context) error {
	prior := recrawl.Prior{Rate: c.Float64("prior-rate"), Days: c.Float64("prior-days"), MinHistory: c.Int("min-history")}
	if !(prior.Rate > 0) || math.IsInf(prior.Rate, 0) || prior.Days < 0 || math.IsNaN(prior.Days) || prior.MinHistory < 1 {
		return clikit.Usagef("--prior-rate must be positive, --prior-days >= 0, --min-history >= 1")
	}
	in, err := clikit.Input(c)
	if err != nil {
		return err
	}
	in.Reuse = true // nothing of a record is kept but its copy in the spool
	// The heap is nearly all the tables below, which only grow: a garbage
	// collection margin of half the live heap, not all of it, keeps the
	// peak near the tables' size for a few more short collections.
	defer debug.SetGCPercent(debug.SetGCPercent(50))
	sp, err := newSpool()
	if err != nil {
		return err
	}
	defer sp.f.Close()
	var pages []estPage // in order of first appearance
	var fetches []fetchObs
	byURL := map[string]int32{}
	err = in.Each(c.Context, c.Args().Slice(), func(r *record.Record) error {
		u, _ := r.StringView("url") // cloned when kept
		if r.Has("fetched_at") {
			obs, skip, err := parseFetch(r)
			if err != nil {
				return r.Errorf("%v", err)
			}
			if skip {
				return nil
			}
			i, seen := byURL[u]
			if !seen {
				i = int32(len(pages))
				byURL[strings.Clone(u)] = i
				pages = append(pages, estPage{latest: -1})
			}
			p := &pages[i]
			if p.counts {
				return r.Errorf("fetch record for %s, which also has a counts record", clip(u))
			}
			obs.page = i
			if p.latest < 0 || obs.compare(&fetches[p.latest]) >= 0 {
				off, size, err := sp.put(r)
				if err != nil {
					return err
				}
				p.off, p.size, p.latest = off, size, int32(len(fetches))
			}
			fetches = append(fetches, obs)
			return nil
		}
		p, err := parseCounts(r, prior)
		if err != nil {
			return r.Errorf("%v", err)
		}
		if _, dup := byURL[u]; dup {
			return r.Errorf("%s appears again", clip(u))
		}
		if p.off, p.size, err = sp.put(r); err != nil {
			return err
		}
		byURL[strings.Clone(u)] = int32(len(pages))
		pages = append(pages, p)
		return nil
	})
	if err != nil {
		return err
	}
	byURL = nil
	if err := sp.w.Flush(); err != nil {
		return fmt.Errorf("spool: %w", err)
	}
	// Each page's fetches together, in order of time (ties as read).
	slices.SortStableFunc(fetches, func(a, b fetchObs) int {
		if a.page != b.page {
			return int(a.page - b.page)
		}
		return a.compare(&b)
	})
	out := clikit.Output(c)
	r := new(record.Record)
	for i := range pages {
		p := &pages[i]
		if err := sp.get(r, p.off, p.size); err != nil {
			return err
		}
		if !p.counts {
			j := 0
			for j < len(fetches) && fetches[j].page == int32(i) {
				j++
			}
			p.estimateHistory(fetches[:j], prior)
			r.SetTime("last_fetch", fetches[j-1].time())
			fetches = fetches[j:]
		}
		r.SetFloat("change_rate", roundSig(p.rate))
		r.SetInt("fetches", int64(p.n+1))
		r.SetInt("changes", int64(p.x))
		if err := out.Write(r); err != nil {
			return err
		}
	}
	return nil
}

func clip(s string) string {
	if len(s) > 100 {
		return s[:100] + "..."
	}
	return s
}

func parseFetch(r *record.Record) (fetchObs, bool, error) {
	t, _, err := r.Time("fetched_at")
	if err != nil {
		return fetchObs{}, false, err
	}
	d, ok := r.StringView("digest")
	if !ok || d == "" {
		if r.Has("error") {
			return fetchObs{}, true, nil // a failed fetch says nothing about change
		}
		return fetchObs{}, false, errors.New(`fetch record without "digest"`)
	}
	return fetchObs{sec: t.Unix(), nsec: int32(t.Nanosecond()), digest: fnv64a(d)}, false, nil
}

// estimateHistory estimates from the gaps between fetches, sorted by time.
func (p *estPage) estimateHistory(hist []fetchObs, prior recrawl.Prior) {
	var o recrawl.Observations
	for i := 1; i < len(hist); i++ {
		gap := hist[i].time().Sub(hist[i-1].time()).Hours() / 24
		if gap <= 0 {
			continue // the same fetch twice
		}
		o.Gaps = append(o.Gaps, gap)
		o.Changed = append(o.Changed, hist[i].digest != hist[i-1].digest)
	}
	p.n = int32(len(o.Gaps))
	for _, ch := range o.Changed {
		if ch {
			p.x++
		}
	}
	p.rate, _ = recrawl.Estimate(o, prior)
}

func parseCounts(r *record.Record, prior recrawl.Prior) (estPage, error) {
	f, ok, err := r.Float("fetches")
	if err != nil {
		return estPage{}, err
	}
	if !ok {
		return estPage{}, errors.New(`neither "fetched_at" (a fetch record) nor "fetches" (counts)`)
	}
	x, _, err := r.Float("changes")
	if err != nil {
		return estPage{}, err
	}
	if f < 1 || f != math.Trunc(f) || f > 1e9 {
		return estPage{}, fmt.Errorf(`field "fetches": want a whole number >= 1, got %v`, f)
	}
	n := int(f) - 1 // intervals
	if x < 0 || x != math.Trunc(x) || x > float64(n) {
		return estPage{}, fmt.Errorf(`field "changes": want a whole number between 0 and fetches-1 = %d, got %v`, n, x)
	}
	var interval float64
	if iv, ok, err := r.Float("interval"); err != nil {
		return estPage{}, err
	} else if ok {
		if iv <= 0 {
			return estPage{}, fmt.Errorf(`field "interval": want seconds > 0, got %v`, iv)
		}
		interval = iv / 86400
	} else if n > 0 {
		first, ok1, err1 := r.Time("first_fetch")
		last, ok2, err2 := r.Time("last_fetch")
		if err := errors.Join(err1, err2); err != nil {
			return estPage{}, err
		}
		if !ok1 || !ok2 || !last.After(first) {
			return estPage{}, errors.New(`counts need "interval" (seconds) or "first_fetch" before "last_fetch"`)
		}
		interval = last.Sub(first).Hours() / 24 / float64(n)
	}
	p := estPage{counts: true, n: int32(n), x: int32(x)}
	p.rate, _ = recrawl.Estimate(recrawl.Observations{N: n, X: int(x), Interval: interval}, prior)
	return p, nil
}

// fnv64a is hash/fnv's 64-bit FNV-1a of s, without its allocations.
func fnv64a(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}
