package sekitei

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sekitei/crawlkit/pkg/record"
)

// turnGen makes the loop's turns: fetch records of pages linked before (new
// pages) and of pages fetched before (recrawls), each with links, half to
// URLs already known and half new, mostly on the page's own host.
type turnGen struct {
	sites   siteGen
	known   []string // a window of known, not yet fetched URLs
	fetched []string // a window of fetched URLs
}

const genWindow = 200_000

func (g *turnGen) remember(list *[]string, u string) {
	if len(*list) < genWindow {
		*list = append(*list, u)
	} else {
		(*list)[g.sites.rng.IntN(genWindow)] = u
	}
}

func (g *turnGen) pick(list []string) (string, bool) {
	if len(list) == 0 {
		return "", false
	}
	return list[g.sites.rng.IntN(len(list))], true
}

// turn makes newPages + recrawls records with links links each.
func (g *turnGen) turn(tb testing.TB, newPages, recrawls, links int) []*record.Record {
	recs := make([]*record.Record, 0, newPages+recrawls)
	for i := 0; i < newPages+recrawls; i++ {
		u, ok := g.pick(g.known)
		if i >= newPages {
			u, ok = g.pick(g.fetched)
		}
		if !ok {
			u = g.sites.urlOn(g.sites.host())
		}
		host, _, _ := strings.Cut(strings.TrimPrefix(u, "http://"), "/")
		ls := make([]string, links)
		for j := range ls {
			if k, ok := g.pick(g.known); ok && j%2 == 0 {
				ls[j] = k
				continue
			}
			h := host
			if g.sites.rng.IntN(10) == 0 {
				h = g.sites.host()
			}
			ls[j] = g.sites.urlOn(h)
			g.remember(&g.known, ls[j])
		}
		errText := ""
		if g.sites.rng.IntN(50) == 0 {
			errText = "robots: disallowed"
		}
		recs = append(recs, fetchRecord(tb, u, ls, errText))
		g.remember(&g.fetched, u)
	}
	return recs
}

// BenchmarkUpdateTurn applies one turn of the loop (500 new pages and 200
// recrawls, 20 links each) to states of growing size over 1,000 hosts. Each
// state is built first through Apply in turns of ten times that size, so its
// hosts were re-clustered as they grew. Compare ns/op and B/op across sizes:
// re-clustering is amortised, so a turn costs about the same at every size.
//
//	go test ./pkg/sekitei -run X -bench UpdateTurn -benchtime 3x
func BenchmarkUpdateTurn(b *testing.B) {
	sizes := []int{10_000, 100_000, 1_000_000}
	if testing.Short() {
		sizes = sizes[:2]
	}
	for _, size := range sizes {
		b.Run(fmt.Sprintf("known=%d", size), func(b *testing.B) {
			dir := b.TempDir()
			path := filepath.Join(dir, "sekitei.state")
			g := &turnGen{sites: siteGen{rng: rand.New(rand.NewPCG(11, uint64(size))), hosts: 1000}}
			st, err := OpenState(path, StateOptions{SiteQuota: 500, MinQuota: 20})
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			batch := 0
			for known := 0; known < size; {
				batch++
				stats, err := st.Apply(fmt.Sprintf("%06d", batch), g.turn(b, 5000, 2000, 20), nil)
				if err != nil {
					b.Fatal(err)
				}
				known += stats.NewURLs
			}
			fi, _ := os.Stat(path)
			turns := make([][]*record.Record, b.N)
			for i := range turns {
				turns[i] = g.turn(b, 500, 200, 20)
			}
			var newURLs, reclustered int
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				stats, err := st.Apply(fmt.Sprintf("%06d", batch+1+i), turns[i], nil)
				if err != nil {
					b.Fatal(err)
				}
				newURLs += stats.NewURLs
				reclustered += stats.Reclustered
			}
			b.StopTimer()
			b.ReportMetric(float64(newURLs)/float64(b.N), "newURLs/turn")
			b.ReportMetric(float64(reclustered)/float64(b.N), "reclustered/turn")
			b.ReportMetric(float64(fi.Size())/(1<<20), "stateMB")
		})
	}
}
