// Package crawlsim makes the fetch batches of a long synthetic crawl, turn by
// turn, without a network: the input of the benchmark of a crawl's life,
// which ages the tools' states by thousands of hourly turns in minutes and
// then times one more turn of the loop's non-fetch steps.
//
// Turn t fetches NewPerTurn pages never fetched before (pages t*NewPerTurn
// to (t+1)*NewPerTurn-1, in order) and RecrawlPerTurn pages fetched before
// (drawn evenly from those), each with Links links: most to pages that will
// be fetched in the next turns (the frontier a real crawl discovers), some
// to pages fetched already. Each page changes as a Poisson process of its
// own rate, drawn log-uniformly from once a month to a few times a day, so
// recrawls find changes at the rates a real web shows. Everything follows
// from the seed and the turn: Turn(t) is the same whenever it is called.
//
// The records are fetch's records ("url", "host", "status", "final_url",
// "fetched_at", "content_type", "length", "digest", "title", "links"); Body
// gives a page's HTML for the WARC files barrel reads.
package crawlsim

import (
	"encoding/base32"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/sekitei/crawlkit/pkg/record"
)

// Config describes the synthetic crawl.
type Config struct {
	Seed           uint64
	Hosts          int           // sites; page k lives on host k % Hosts
	NewPerTurn     int           // pages fetched for the first time each turn
	RecrawlPerTurn int           // pages fetched again each turn
	Links          int           // links per page
	Start          time.Time     // the time of turn 0
	Every          time.Duration // the time between turns
}

// Default is the crawl of the loop's benchmark: 700 fetches an hour over
// 1,000 hosts.
func Default() Config {
	return Config{Seed: 1, Hosts: 1000, NewPerTurn: 500, RecrawlPerTurn: 200, Links: 20,
		Start: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), Every: time.Hour}
}

// A Fetch is one fetch of a page in a turn.
type Fetch struct {
	Page      int // the page's number
	URL, Host string
	At        time.Time
	Version   int // how many times the page has changed by At
	Links     []string
}

// Host returns the name of host h.
func (c Config) Host(h int) string { return fmt.Sprintf("site%04d.test", h) }

// URL returns page k's URL.
func (c Config) URL(k int) string {
	h := k % c.Hosts
	// Pages of a site live in a few sections with numbered articles, so
	// that segment clustering has real structure to find.
	return fmt.Sprintf("http://%s/%s/%d/%d.html", c.Host(h), sections[k/c.Hosts%len(sections)], k/(c.Hosts*len(sections))%97, k)
}

var sections = []string{"news", "sport", "culture", "science", "travel", "wiki"}

// rate is page k's change rate per day: log-uniform from 1/30 to 4.
func (c Config) rate(k int) float64 {
	u := float64(c.hash(uint64(k), 1)%1_000_000) / 1_000_000
	return math.Exp(math.Log(1.0/30) + u*(math.Log(4)-math.Log(1.0/30)))
}

// version is how many times page k has changed by time at, counted from the
// crawl's start: the Poisson process is simulated from the page's own
// stream, one exponential gap at a time, which is exact and cheap for the
// few hundred changes a page has in a year.
func (c Config) version(k int, at time.Time) int {
	days := at.Sub(c.Start).Hours() / 24
	r := rand.New(rand.NewPCG(c.Seed, uint64(k)<<8|2))
	rate := c.rate(k)
	n, t := 0, 0.0
	for {
		t += r.ExpFloat64() / rate
		if t > days {
			return n
		}
		n++
	}
}

func (c Config) hash(a, b uint64) uint64 {
	h := fnv.New64a()
	var buf [24]byte
	binary.LittleEndian.PutUint64(buf[0:], c.Seed)
	binary.LittleEndian.PutUint64(buf[8:], a)
	binary.LittleEndian.PutUint64(buf[16:], b)
	h.Write(buf[:])
	return h.Sum64()
}

// Turn returns the fetches of turn t (from 0), new pages first, then
// recrawls.
func (c Config) Turn(t int) []Fetch {
	at := c.Start.Add(time.Duration(t) * c.Every)
	r := rand.New(rand.NewPCG(c.Seed, uint64(t)<<8|3))
	out := make([]Fetch, 0, c.NewPerTurn+c.RecrawlPerTurn)
	for k := t * c.NewPerTurn; k < (t+1)*c.NewPerTurn; k++ {
		out = append(out, c.fetch(k, t, at, r))
	}
	if fetched := t * c.NewPerTurn; fetched > 0 {
		seen := map[int]bool{}
		for len(seen) < min(c.RecrawlPerTurn, fetched) {
			k := r.IntN(fetched)
			if !seen[k] {
				seen[k] = true
				out = append(out, c.fetch(k, t, at, r))
			}
		}
	}
	return out
}

func (c Config) fetch(k, t int, at time.Time, r *rand.Rand) Fetch {
	f := Fetch{Page: k, URL: c.URL(k), Host: c.Host(k % c.Hosts), At: at, Version: c.version(k, at)}
	// Links: four in five to pages of the next few turns (found now,
	// fetched later), the rest to pages fetched already; half on the
	// page's own host.
	horizon := (t + 4) * c.NewPerTurn
	for i := 0; i < c.Links; i++ {
		var j int
		if r.IntN(5) > 0 || t == 0 {
			j = (t+1)*c.NewPerTurn + r.IntN(horizon-(t+1)*c.NewPerTurn)
		} else {
			j = r.IntN(t * c.NewPerTurn)
		}
		if r.IntN(2) == 0 {
			j = j - j%c.Hosts + k%c.Hosts // the same host
		}
		f.Links = append(f.Links, c.URL(j))
	}
	return f
}

// Title returns the page's title in its current version.
func (f Fetch) Title() string {
	return fmt.Sprintf("Page %d, version %d", f.Page, f.Version)
}

// Body returns the page's HTML in its current version.
func (f Fetch) Body() []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "<!doctype html><html><head><title>%s</title></head><body><h1>%s</h1>\n", f.Title(), f.Title())
	r := rand.New(rand.NewPCG(uint64(f.Page), uint64(f.Version)))
	for p := 0; p < 3; p++ {
		b.WriteString("<p>")
		for w := 0; w < 40; w++ {
			b.WriteString(words[r.IntN(len(words))])
			b.WriteByte(' ')
		}
		b.WriteString("</p>\n")
	}
	for _, l := range f.Links {
		fmt.Fprintf(&b, "<a href=\"%s\">%s</a>\n", l, words[r.IntN(len(words))])
	}
	b.WriteString("</body></html>\n")
	return []byte(b.String())
}

var words = strings.Fields(`crawl index page link rank search query engine fresh change rate host
site segment quota opic cash history value budget queue barrel lexicon hit anchor title body text
river mountain city station market harbour library museum garden bridge tower theatre festival
season weather report story article review science sport travel culture music film science`)

// Digest is the page's payload digest in its current version, as fetch
// writes it.
func (f Fetch) Digest() string {
	var buf [20]byte
	binary.LittleEndian.PutUint64(buf[:], uint64(f.Page))
	binary.LittleEndian.PutUint64(buf[8:], uint64(f.Version))
	return "sha1:" + base32.StdEncoding.EncodeToString(buf[:])
}

// Record returns the fetch record; warcFile and offset say where the
// exchange is stored ("" for none).
func (f Fetch) Record(warcFile string, offset int64) *record.Record {
	rec := record.New(f.URL)
	rec.SetString("host", f.Host)
	rec.SetInt("status", 200)
	rec.SetString("final_url", f.URL)
	rec.SetTime("fetched_at", f.At)
	rec.SetString("content_type", "text/html")
	rec.SetInt("length", int64(len(f.Body())))
	rec.SetString("digest", f.Digest())
	rec.SetString("title", f.Title())
	rec.SetStrings("links", f.Links)
	if warcFile != "" {
		rec.SetString("warc_file", warcFile)
		rec.SetInt("warc_offset", offset)
	}
	return rec
}

// LastVersions calls fn with the last fetch, by the end of turn turns-1,
// of every page fetched in turns 0 to turns-1, in the order of those last
// fetches: the pages an index of the crawl at that age holds.
func (c Config) LastVersions(turns int, fn func(Fetch) error) error {
	last := make([]int32, turns*c.NewPerTurn) // the turn of each page's last fetch
	for t := range turns {
		for _, f := range c.Turn(t) {
			last[f.Page] = int32(t)
		}
	}
	for t := range turns {
		for _, f := range c.Turn(t) {
			if last[f.Page] != int32(t) {
				continue
			}
			if err := fn(f); err != nil {
				return err
			}
		}
	}
	return nil
}
