// Package focusweb generates a crawlable web for evaluating focused
// crawling: sites with the URL layouts real sites have (home, paginated
// section indexes, dated articles, print copies, tags, forum threads with
// query parameters in any order, search pages, user profiles), page text
// on topics, anchor texts, and user visits drawn so that the visited pages
// (QLinks) cluster by segment and by topic, as they do on real sites: many
// on articles of popular topics, some on forum threads and indexes, none on
// print copies and search pages. A share of the QLinks is given to the
// crawler as its visit log; the rest are the pages it should find.
//
// internal/sitegen, the demo's web, has neither topics nor visit counts,
// and its good pages are chosen per kind alone, so this package builds its
// own sites; it is seeded and deterministic.
package focusweb

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strings"

	"github.com/sekitei/crawlkit/pkg/crawlorder"
)

// Topics are the vocabularies pages are written from; the first is the
// most visited.
var Topics = [][]string{
	strings.Fields("roses tulips garden soil seeds compost pruning greenhouse orchid lawn bulbs watering seedlings perennial mulch"),
	strings.Fields("football league match goal striker coach stadium transfer season cup referee penalty defender midfield derby"),
	strings.Fields("recipe soup baking oven flour sauce dough roast spices dessert pastry grill salad broth kitchen"),
	strings.Fields("engine sedan gearbox tyres diesel brakes mileage coupe chassis turbo hybrid clutch suspension dealer garage"),
	strings.Fields("album guitar concert band singer chorus vinyl drummer tour festival melody lyrics piano orchestra jazz"),
	strings.Fields("flight hotel beach visa passport luggage island hostel cruise resort museum itinerary ferry backpack airport"),
}

// popularity of each topic: how likely its articles are visited.
var popularity = []float64{1, 0.6, 0.35, 0.2, 0.12, 0.08}

var general = strings.Fields(`the of and new year people time day city report today week part world
	local first last best great small read more about other news page home
	again after before during under over between through another every many`)

// Config sizes the web.
type Config struct {
	Seed       uint64
	Hosts      int     // sites
	Articles   int     // articles per site (the other kinds scale with it)
	KnownShare float64 // share of the QLinks in the crawler's visit log
}

// DefaultConfig is the evaluation's web: 8 sites of about 1,400 pages.
func DefaultConfig() Config { return Config{Seed: 1, Hosts: 8, Articles: 450, KnownShare: 0.5} }

// A Page is one generated page.
type Page struct {
	crawlorder.Page
	Host    string
	Kind    string // home, index, article, print, tag, forum, search, user
	Topic   int    // -1 for none
	Visits  float64
	Known   bool // a QLink in the crawler's visit log
	Section string
}

// Web is the generated web.
type Web struct {
	Config Config
	Pages  map[string]*Page
	URLs   []string // in generation order
	Seeds  []string // the home pages
	Hosts  []string
}

// Fetch returns the page at u, as a crawler sees it.
func (w *Web) Fetch(u string) (*crawlorder.Page, bool) {
	p, ok := w.Pages[u]
	if !ok {
		return nil, false
	}
	return &p.Page, true
}

// Visits returns the crawler's visit log: the known QLinks and their visits.
func (w *Web) Visits() map[string]float64 {
	v := map[string]float64{}
	for _, u := range w.URLs {
		if p := w.Pages[u]; p.Known {
			v[u] = p.Visits
		}
	}
	return v
}

// QLinks counts the pages users visit.
func (w *Web) QLinks() int {
	n := 0
	for _, p := range w.Pages {
		if p.Visits > 0 {
			n++
		}
	}
	return n
}

type gen struct {
	w *Web
	r *rand.Rand
}

func (g *gen) words(topic, n int, share float64) string {
	ws := make([]string, n)
	for i := range ws {
		if topic >= 0 && g.r.Float64() < share {
			ws[i] = Topics[topic][g.r.IntN(len(Topics[topic]))]
		} else {
			ws[i] = general[g.r.IntN(len(general))]
		}
	}
	return strings.Join(ws, " ")
}

func (g *gen) add(host, path, kind, section string, topic int, text string) *Page {
	u := "http://" + host + path
	if p, ok := g.w.Pages[u]; ok {
		return p
	}
	p := &Page{Page: crawlorder.Page{URL: u, Terms: crawlorder.Terms(text)}, Host: host, Kind: kind, Topic: topic, Section: section}
	g.w.Pages[u] = p
	g.w.URLs = append(g.w.URLs, u)
	return p
}

func link(p, to *Page, anchor string) {
	p.Links = append(p.Links, crawlorder.Link{URL: to.URL, Anchor: anchor, Context: anchor})
}

// visit draws a page's visits: a QLink with probability rate, then a
// heavy-tailed count scaled by the site's popularity.
func (g *gen) visit(p *Page, rate, sitePop float64) {
	if g.r.Float64() < rate {
		p.Visits = math.Ceil(sitePop * (1 + g.r.ExpFloat64()*5))
	}
}

// Generate builds the web of cfg.
func Generate(cfg Config) *Web {
	r := rand.New(rand.NewPCG(cfg.Seed, 0x7e5e))
	g := &gen{w: &Web{Config: cfg, Pages: map[string]*Page{}}, r: r}
	var articlesByTopic [][]*Page = make([][]*Page, len(Topics))
	type site struct {
		host     string
		articles []*Page
		pop      float64
	}
	var sites []*site
	for h := 0; h < cfg.Hosts; h++ {
		host := fmt.Sprintf("site%d.test", h)
		g.w.Hosts = append(g.w.Hosts, host)
		s := &site{host: host, pop: 1 + 4*r.Float64()}
		sites = append(sites, s)
		main := h % len(Topics)
		home := g.add(host, "/", "home", "", main, g.words(main, 30, 0.3))
		home.Visits = math.Ceil(20 * s.pop)
		g.w.Seeds = append(g.w.Seeds, home.URL)
		// Three sections: two on the site's topic, one on another.
		sections := []struct {
			name  string
			topic int
		}{{"news", main}, {"blog", main}, {"review", (main + 1 + r.IntN(len(Topics)-1)) % len(Topics)}}
		var tags []*Page
		for t := 0; t < 20; t++ {
			w := Topics[(main+t%3)%len(Topics)][t%len(Topics[0])]
			tp := g.add(host, "/tag/"+w+"/", "tag", "", -1, w)
			g.visit(tp, 0.03, s.pop)
			tags = append(tags, tp)
		}
		var users []*Page
		for u := 0; u < 40; u++ {
			up := g.add(host, fmt.Sprintf("/user/u%d/", 100+u), "user", "", -1, "profile "+g.words(-1, 5, 0))
			users = append(users, up)
		}
		for si, sec := range sections {
			var arts []*Page
			for a := 0; a < cfg.Articles/len(sections); a++ {
				id := 1000 + si*10000 + a*7 + r.IntN(7)
				month := 1 + r.IntN(12)
				title := g.words(sec.topic, 5, 0.7)
				ap := g.add(host, fmt.Sprintf("/%s/2026/%d/%d.html", sec.name, month, id), "article", sec.name, sec.topic, title+" "+g.words(sec.topic, 60, 0.5))
				g.visit(ap, 0.35*popularity[sec.topic], s.pop)
				pp := g.add(host, fmt.Sprintf("/print/%d.html", id), "print", sec.name, sec.topic, title+" print")
				link(ap, pp, "print version")
				link(pp, ap, title)
				arts = append(arts, ap)
				articlesByTopic[sec.topic] = append(articlesByTopic[sec.topic], ap)
				for k := 0; k < 2; k++ {
					tp := tags[r.IntN(len(tags))]
					link(ap, tp, tp.Terms[0])
					link(tp, ap, title)
				}
				link(ap, users[r.IntN(len(users))], "author")
			}
			s.articles = append(s.articles, arts...)
			// Paginated index, newest first, 12 articles a page.
			var prev *Page
			for pg := 0; pg*12 < len(arts); pg++ {
				path := "/" + sec.name + "/"
				if pg > 0 {
					path = fmt.Sprintf("/%s/page/%d/", sec.name, pg+1)
				}
				ip := g.add(host, path, "index", sec.name, sec.topic, sec.name+" "+g.words(sec.topic, 20, 0.4))
				if pg == 0 {
					ip.Visits = math.Ceil(5 * s.pop)
					link(home, ip, sec.name)
				} else {
					g.visit(ip, 0.1, s.pop)
					link(prev, ip, "next page")
				}
				for _, ap := range arts[pg*12 : min(len(arts), (pg+1)*12)] {
					link(ip, ap, strings.Join(ap.Terms[:5], " "))
				}
				prev = ip
			}
			// Related articles inside the section.
			for i, ap := range arts {
				for k := 1; k <= 3; k++ {
					to := arts[(i+k*k+r.IntN(5))%len(arts)]
					link(ap, to, strings.Join(to.Terms[:5], " "))
				}
			}
			// Forum threads of the section's topic; parameters in any order.
			for th := 0; th < 12; th++ {
				var prevf *Page
				for pg := 1; pg <= 4; pg++ {
					q := fmt.Sprintf("topic=%d&page=%d", 500+si*100+th, pg)
					if r.IntN(2) == 0 {
						q = fmt.Sprintf("page=%d&topic=%d", pg, 500+si*100+th)
					}
					fp := g.add(host, "/forum/?"+q, "forum", sec.name, sec.topic, g.words(sec.topic, 40, 0.5))
					g.visit(fp, 0.25*popularity[sec.topic]/float64(pg), s.pop)
					if prevf == nil {
						link(home, fp, "forum "+strings.Join(fp.Terms[:3], " "))
					} else {
						link(prevf, fp, "next page")
					}
					link(fp, arts[r.IntN(len(arts))], "see")
					prevf = fp
				}
			}
		}
		for q := 0; q < 30; q++ {
			w := Topics[r.IntN(len(Topics))][r.IntN(15)]
			sp := g.add(host, fmt.Sprintf("/search?q=%s&p=%d", w, 1+r.IntN(5)), "search", "", -1, "search results "+w)
			link(home, sp, "search "+w)
			for k := 0; k < 8; k++ {
				ap := s.articles[r.IntN(len(s.articles))]
				link(sp, ap, strings.Join(ap.Terms[:5], " "))
			}
		}
		for _, tp := range tags[:6] {
			link(home, tp, tp.Terms[0])
		}
		for _, up := range users {
			for k := 0; k < 4; k++ {
				ap := s.articles[r.IntN(len(s.articles))]
				link(up, ap, strings.Join(ap.Terms[:5], " "))
			}
		}
	}
	// Links between sites, on the same topic.
	for _, s := range sites {
		for _, ap := range s.articles {
			if r.IntN(5) == 0 {
				others := articlesByTopic[ap.Topic]
				to := others[r.IntN(len(others))]
				link(ap, to, strings.Join(to.Terms[:5], " "))
			}
		}
	}
	// The visit log: a share of the QLinks, drawn at random.
	for _, u := range g.w.URLs {
		if p := g.w.Pages[u]; p.Visits > 0 && r.Float64() < cfg.KnownShare {
			p.Known = true
		}
	}
	sort.Strings(g.w.Hosts)
	return g.w
}
