// Package sitegen generates a realistic static web site from a seed: a news
// and encyclopedia site of a few thousand pages with the link structure such
// sites have (a home page, paginated section indexes, dated articles linking
// to related articles by preferential attachment, tags, authors, categories,
// wiki pages and image pages, print versions that duplicate content and a
// search that robots.txt forbids). The site evolves by day: pages change as
// Poisson processes with their own rates and new articles appear, so a crawl
// loop run over several days has changes to detect and a growing graph.
//
// It exists so that the demo and the end-to-end tests crawl something with
// the shape of the real web on a machine with no internet; no data set of
// that shape and licence ships in a Debian or Go package.
package sitegen

import (
	"fmt"
	"hash/fnv"
	"html"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Config describes the web: Hosts sites of the same shape, each with
// Articles/len(Hosts) articles and Wiki/len(Hosts) encyclopedia pages, linked
// to each other.
type Config struct {
	Seed     uint64
	Hosts    []string // host names, one site each
	Port     int      // port in the sites' URLs; 0 for none
	Articles int      // articles on day 0, over all sites
	Wiki     int      // encyclopedia pages, over all sites
	PerDay   int      // new articles each day, over all sites
	Day      int      // the day to render
}

// DefaultHosts are the demo web's sites.
var DefaultHosts = []string{"chronicle.test", "wiki.test", "sport.test", "science.test", "city.test", "travel.test"}

// DefaultConfig gives about 3,000 fetchable pages over six hosts on day 0.
func DefaultConfig() Config {
	return Config{Seed: 1, Hosts: DefaultHosts, Port: 18080, Articles: 2000, Wiki: 800, PerDay: 40}
}

// URL returns the absolute URL of a path on a host.
func (c Config) URL(host, path string) string {
	if c.Port != 0 {
		return fmt.Sprintf("http://%s:%d%s", host, c.Port, path)
	}
	return "http://" + host + path
}

// Page is one generated page.
type Page struct {
	Host    string
	Path    string // URL path, with query if any
	Title   string
	Kind    string   // home, index, article, tag, author, wiki, category, file, print
	Good    bool     // a page users visit (a QLink for sekitei)
	Rate    float64  // changes per day
	Links   []string // root-relative in the same site, absolute to others
	Body    []string // paragraphs
	Version int      // changes so far on the rendered day
}

// Web is the set of sites as of Config.Day.
type Web struct {
	Config Config
	Pages  []*Page
	byKey  map[string]*Page // host + path
}

// Page returns the page at an absolute URL or a host and root-relative path.
func (w *Web) page(host, link string) (*Page, bool) {
	if strings.HasPrefix(link, "http://") {
		for _, h := range w.Config.Hosts {
			if rest, ok := strings.CutPrefix(link, strings.TrimSuffix(w.Config.URL(h, "/"), "/")); ok {
				p, ok := w.byKey[h+rest]
				return p, ok
			}
		}
		return nil, false
	}
	p, ok := w.byKey[host+link]
	return p, ok
}

var (
	sections = []string{"news", "articles"}
	rubrics  = []string{"world", "russia", "economics", "science", "sport", "culture", "tech", "travel"}
	authors  = []string{"ivanova", "petrov", "sidorov", "kuznetsova", "smirnov", "popova", "volkov", "lebedeva", "kozlov", "novikova"}
	words    = strings.Fields(`market bank river station metro council minister festival museum match
		league season election budget court satellite telescope vaccine climate harbour bridge
		railway airport theatre orchestra library university school hospital forest island
		mountain glacier volcano storm flood harvest factory reactor engine rocket probe
		painter novel poet composer dynasty empire treaty fortress cathedral monastery village
		city capital province region border coast desert canal tunnel highway tramway ferry
		record champion coach stadium final cup title transfer strike protest reform tax
		price inflation export import pipeline energy solar wind nuclear grid network cable
		server software startup platform robot drone sensor chip battery vehicle cargo`)
	adjectives = strings.Fields(`new old northern southern eastern western great small ancient
		modern national local central regional historic famous quiet busy frozen sunny
		underground orbital digital electric rapid silent golden silver`)
	verbs = strings.Fields(`opens closes builds wins loses signs rejects approves launches
		finds restores moves reaches expands cuts raises lowers hosts welcomes delays`)
)

func pick(r *rand.Rand, list []string) string { return list[r.IntN(len(list))] }

func title(r *rand.Rand) string {
	return fmt.Sprintf("%s %s %s %s %s", capital(pick(r, adjectives)), pick(r, words), pick(r, verbs), pick(r, adjectives), pick(r, words))
}

func capital(w string) string {
	return strings.ToUpper(w[:1]) + w[1:]
}

func slug(t string, r *rand.Rand) string {
	f := strings.Fields(strings.ToLower(t))
	return f[1] + f[len(f)-1] + fmt.Sprint(r.IntN(100))
}

func paragraph(r *rand.Rand, n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(' ')
		}
		if r.IntN(3) == 0 {
			b.WriteString(pick(r, adjectives) + " ")
		}
		b.WriteString(pick(r, words))
		if r.IntN(5) == 0 {
			b.WriteString(" " + pick(r, verbs))
		}
	}
	return b.String() + "."
}

// Generate builds the web as of cfg.Day. The same Config always gives the
// same web, and day d+1 extends day d: pages only appear and change.
func Generate(cfg Config) *Web {
	if len(cfg.Hosts) == 0 {
		cfg.Hosts = []string{"localhost"}
	}
	w := &Web{Config: cfg, byKey: map[string]*Page{}}
	n := len(cfg.Hosts)
	sites := make([]*site, n)
	for i, host := range cfg.Hosts {
		sc := cfg
		sc.Articles, sc.Wiki, sc.PerDay = share(cfg.Articles, n, i), share(cfg.Wiki, n, i), share(cfg.PerDay, n, i)
		sites[i] = w.genSite(sc, host, uint64(i))
	}
	// The web between the sites: homes link to each other, and a share of
	// articles and encyclopedia pages cite day-0 pages of other sites, on a
	// random stream of its own so that it is the same on every day.
	r := rand.New(rand.NewPCG(cfg.Seed, 0xbeef))
	for i, s := range sites {
		for j, o := range sites {
			if i != j {
				s.home.Links = append(s.home.Links, cfg.URL(o.host, "/"))
			}
		}
		if n == 1 {
			continue
		}
		for _, p := range append(append([]*Page{}, s.articles[:s.day0]...), s.wiki...) {
			if r.IntN(3) != 0 {
				continue
			}
			o := sites[(i+1+r.IntN(n-1))%n]
			var target *Page
			if r.IntN(2) == 0 && o.day0 > 0 {
				target = o.articles[int(float64(o.day0)*math.Pow(r.Float64(), 3))]
			} else if len(o.wiki) > 0 {
				target = o.wiki[int(float64(len(o.wiki))*math.Pow(r.Float64(), 3))]
			}
			if target != nil {
				p.Links = append(p.Links, cfg.URL(o.host, target.Path))
			}
		}
	}
	// Changes: a page's version on day D is the number of events of its
	// Poisson process in [0, D), drawn from a generator of its own so that
	// it does not depend on how many pages exist.
	for _, p := range w.Pages {
		pr := rand.New(rand.NewPCG(cfg.Seed, hash(p.Host+p.Path)))
		t := pr.ExpFloat64() / p.Rate
		for t < float64(cfg.Day) {
			p.Version++
			t += pr.ExpFloat64() / p.Rate
		}
	}
	return w
}

// share splits total into n near-equal parts and returns part i.
func share(total, n, i int) int {
	return total/n + btoi(i < total%n)
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

type site struct {
	host     string
	home     *Page
	articles []*Page
	day0     int // articles that exist on day 0
	wiki     []*Page
}

func (w *Web) genSite(cfg Config, host string, stream uint64) *site {
	r := rand.New(rand.NewPCG(cfg.Seed, 0x517e+stream))
	add := func(p *Page) *Page {
		p.Host = host
		if old, ok := w.byKey[host+p.Path]; ok {
			return old
		}
		w.byKey[host+p.Path] = p
		w.Pages = append(w.Pages, p)
		return p
	}
	s := &site{host: host, day0: cfg.Articles}
	s.home = add(&Page{Path: "/", Title: capital(strings.Split(host, ".")[0]) + " daily", Kind: "home", Good: true, Rate: 3})
	total := cfg.Articles + cfg.PerDay*cfg.Day
	weight := []float64{} // preferential attachment: popular articles get linked more
	tagPages := map[string]*Page{}
	authorPages := map[string]*Page{}
	for i := 0; i < total; i++ {
		day := 0
		if i >= cfg.Articles {
			day = 1 + (i-cfg.Articles)/max(cfg.PerDay, 1)
		}
		sec := sections[0]
		if r.IntN(4) == 0 {
			sec = sections[1]
		}
		// Dates run backwards from 2014-12-28 for day-0 articles, forwards
		// from 2015-01-01 for later ones.
		var y, m, d int
		if day == 0 {
			back := (cfg.Articles - i) / 3
			y, m, d = 2014-back/336, 12-(back/28)%12, 28-back%28
		} else {
			y, m, d = 2015, 1+(day-1)/28%12, 1+(day-1)%28
		}
		t := title(r)
		p := add(&Page{
			Path:  fmt.Sprintf("/%s/%04d/%02d/%02d/%s/", sec, y, m, d, slug(t, r)),
			Title: t, Kind: "article", Good: r.Float64() < 0.6,
			Rate: 0.02 + 0.3*r.ExpFloat64()/float64(1+i%7),
		})
		for k := 0; k < 3+r.IntN(4); k++ {
			p.Body = append(p.Body, paragraph(r, 20+r.IntN(40)))
		}
		// Related articles, chosen by popularity.
		for k := 0; k < 2+r.IntN(6) && len(s.articles) > 0; k++ {
			j := weightedPick(r, weight)
			p.Links = append(p.Links, s.articles[j].Path)
			weight[j]++
		}
		rub := pick(r, rubrics)
		tp := tagPages[rub]
		if tp == nil {
			tp = add(&Page{Path: "/tags/" + rub + "/", Title: "Tag: " + rub, Kind: "tag", Rate: 1})
			tagPages[rub] = tp
		}
		tp.Links = append(tp.Links, p.Path)
		p.Links = append(p.Links, tp.Path)
		au := pick(r, authors)
		ap := authorPages[au]
		if ap == nil {
			ap = add(&Page{Path: "/authors/" + au + "/", Title: "Author " + au, Kind: "author", Rate: 0.5})
			authorPages[au] = ap
		}
		ap.Links = append(ap.Links, p.Path)
		p.Links = append(p.Links, ap.Path, p.Path+"?print=1")
		add(&Page{Path: p.Path + "?print=1", Title: t + " (print)", Kind: "print", Rate: p.Rate, Body: p.Body})
		if r.IntN(3) == 0 {
			p.Links = append(p.Links, "/search?q="+strings.Fields(strings.ToLower(t))[1])
		}
		s.articles = append(s.articles, p)
		weight = append(weight, 1)
	}
	// The encyclopedia: pages, categories and images, linked densely. It has
	// a random stream of its own and links only to day-0 articles, so that it
	// is the same on every day.
	r = rand.New(rand.NewPCG(cfg.Seed, 0x3141+stream))
	cats := map[string]*Page{}
	for i := 0; i < cfg.Wiki; i++ {
		t := capital(pick(r, words)) + "_" + pick(r, words)
		if r.IntN(4) == 0 {
			t += fmt.Sprintf("_%d", 1800+r.IntN(220))
		}
		p := add(&Page{Path: "/wiki/" + t, Title: strings.ReplaceAll(t, "_", " "), Kind: "wiki", Good: r.Float64() < 0.5, Rate: 0.01 + 0.05*r.ExpFloat64()})
		if len(p.Body) > 0 {
			continue // the title was taken: add returned the older page
		}
		for k := 0; k < 4+r.IntN(5); k++ {
			p.Body = append(p.Body, paragraph(r, 30+r.IntN(50)))
		}
		cat := capital(pick(r, rubrics))
		cp := cats[cat]
		if cp == nil {
			cp = add(&Page{Path: "/wiki/Category:" + cat, Title: "Category " + cat, Kind: "category", Rate: 0.3})
			cats[cat] = cp
		}
		cp.Links = append(cp.Links, p.Path)
		p.Links = append(p.Links, cp.Path)
		if r.IntN(3) == 0 {
			f := add(&Page{Path: "/wiki/File:" + t + ".jpg", Title: "File " + t, Kind: "file", Rate: 0.005})
			f.Links = append(f.Links, p.Path)
			p.Links = append(p.Links, f.Path)
		}
		for k := 0; k < 3+r.IntN(8) && len(s.wiki) > 0; k++ {
			q := s.wiki[int(float64(len(s.wiki))*math.Pow(r.Float64(), 2))] // older pages are linked more
			p.Links = append(p.Links, q.Path)
			q.Links = append(q.Links, p.Path)
		}
		if cfg.Articles > 0 && r.IntN(2) == 0 {
			a := s.articles[r.IntN(min(cfg.Articles, len(s.articles)))]
			a.Links = append(a.Links, p.Path)
		}
		s.wiki = append(s.wiki, p)
	}
	// Section indexes, paginated, newest first; the home page shows the newest.
	for _, sec := range sections {
		var list []*Page
		for i := len(s.articles) - 1; i >= 0; i-- {
			if strings.HasPrefix(s.articles[i].Path, "/"+sec+"/") {
				list = append(list, s.articles[i])
			}
		}
		const per = 30
		for pg := 0; pg*per < len(list); pg++ {
			path := "/" + sec + "/"
			if pg > 0 {
				path += fmt.Sprintf("?page=%d", pg+1)
			}
			ip := add(&Page{Path: path, Title: capital(sec) + fmt.Sprintf(", page %d", pg+1), Kind: "index", Good: pg == 0, Rate: 2 / float64(1+pg)})
			for _, a := range list[pg*per : min((pg+1)*per, len(list))] {
				ip.Links = append(ip.Links, a.Path)
			}
			if (pg+1)*per < len(list) {
				ip.Links = append(ip.Links, fmt.Sprintf("/%s/?page=%d", sec, pg+2))
			}
			if pg == 0 {
				s.home.Links = append(s.home.Links, path)
			}
		}
	}
	for i := len(s.articles) - 1; i >= 0 && i >= len(s.articles)-20; i-- {
		s.home.Links = append(s.home.Links, s.articles[i].Path)
	}
	keys := make([]string, 0, len(tagPages))
	for k := range tagPages {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		s.home.Links = append(s.home.Links, tagPages[k].Path)
	}
	if len(s.wiki) > 0 {
		s.home.Links = append(s.home.Links, s.wiki[0].Links[0], s.wiki[0].Path)
	}
	return s
}

func weightedPick(r *rand.Rand, w []float64) int {
	var sum float64
	for _, x := range w {
		sum += x
	}
	x := r.Float64() * sum
	for i, v := range w {
		x -= v
		if x < 0 {
			return i
		}
	}
	return len(w) - 1
}

func hash(s string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return h.Sum64()
}

// Render returns the HTML of a page.
func (w *Web) Render(p *Page) string {
	var b strings.Builder
	esc := html.EscapeString
	fmt.Fprintf(&b, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>%s</title>", esc(p.Title))
	if p.Kind == "print" {
		fmt.Fprintf(&b, "<link rel=\"canonical\" href=\"%s\">", esc(strings.TrimSuffix(p.Path, "?print=1")))
	}
	fmt.Fprintf(&b, "</head>\n<body><h1>%s</h1>\n", esc(p.Title))
	for i, para := range p.Body {
		if i == 1 {
			fmt.Fprintf(&b, "<h2>%s</h2>\n", esc(strings.SplitN(para, " ", 4)[0]))
		}
		words := strings.SplitN(para, " ", 2)
		rest := ""
		if len(words) > 1 {
			rest = " " + words[1]
		}
		fmt.Fprintf(&b, "<p><b>%s</b>%s</p>\n", esc(words[0]), esc(rest))
	}
	if p.Version > 0 {
		fmt.Fprintf(&b, "<p class=\"updated\">Updated %d times since publication.</p>\n", p.Version)
	}
	b.WriteString("<ul>\n")
	for _, l := range p.Links {
		text := l
		if q, ok := w.page(p.Host, l); ok {
			text = q.Title
		}
		fmt.Fprintf(&b, "<li><a href=\"%s\">%s</a></li>\n", esc(l), esc(text))
	}
	b.WriteString("</ul></body></html>\n")
	return b.String()
}

// Robots is a site's robots.txt: the search and print versions are off
// limits to every crawler.
const Robots = "User-agent: *\nDisallow: /search\nDisallow: /*?print=\n\nUser-agent: BadBot\nDisallow: /\n"

// Write renders the web into dir for a web server with one virtual host per
// site: dir/HOST/ holds a site's files, where a path /a/b/ becomes
// a/b/index.html and a query ?k=v a file named "index.html?k=v" (see
// scripts/serve-site.sh), and dir/HOST/robots.txt its robots.txt. Beside
// them: seeds.txt (the first site's home page), hosts (every host on
// 127.0.0.1, in /etc/hosts form, for fetch --hosts-file), good.txt (the pages
// users visit: sekitei's QLinks) and rates.tsv (each page's true change rate
// and version, to check estimates against).
func (w *Web) Write(dir string) error {
	var good, rates, hosts strings.Builder
	for _, p := range w.Pages {
		u := w.Config.URL(p.Host, p.Path)
		if p.Good {
			good.WriteString(u + "\n")
		}
		fmt.Fprintf(&rates, "%s\t%.4f\t%d\n", u, p.Rate, p.Version)
		if p.Kind == "print" {
			continue // served by the same file as its article
		}
		if err := writeFile(filepath.Join(dir, p.Host, FileFor(p.Path)), w.Render(p)); err != nil {
			return err
		}
	}
	for i, h := range w.Config.Hosts {
		robots := Robots
		if i%3 == 1 { // some sites keep crawlers off their tag pages too
			robots = strings.Replace(robots, "Disallow: /search\n", "Disallow: /search\nDisallow: /tags/\n", 1)
		}
		if err := writeFile(filepath.Join(dir, h, "robots.txt"), robots); err != nil {
			return err
		}
		fmt.Fprintf(&hosts, "127.0.0.1 %s\n", h)
	}
	files := map[string]string{
		"seeds.txt": w.Config.URL(w.Config.Hosts[0], "/") + "\n",
		"hosts":     hosts.String(),
		"good.txt":  good.String(),
		"rates.tsv": rates.String(),
	}
	for name, text := range files {
		if err := writeFile(filepath.Join(dir, name), text); err != nil {
			return err
		}
	}
	return nil
}

// FileFor maps a URL path (with query) to the file that holds it.
func FileFor(path string) string {
	p, q, _ := strings.Cut(path, "?")
	if strings.HasSuffix(p, "/") {
		p += "index.html"
	}
	if q != "" {
		p += "?" + q
	}
	return filepath.FromSlash(strings.TrimPrefix(p, "/"))
}

func writeFile(path, text string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(text), 0o644)
}
