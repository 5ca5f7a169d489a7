package barrel

import (
	"net/url"
	"slices"
	"strings"

	"github.com/sekitei/crawlkit/pkg/barrel/analysis"
	"github.com/sekitei/crawlkit/pkg/barrel/htmldoc"
)

// Quality is the result of the title-query evaluation.
type Quality struct {
	Pages, First, NoTitle int
	Misses                []Miss
}

// Miss is a page whose title query did not return it first.
type Miss struct {
	Title, Want, Got string
}

// Ratio is the share of titled pages returned first by their title.
func (q Quality) Ratio() float64 {
	if q.Pages == 0 {
		return 0
	}
	return float64(q.First) / float64(q.Pages)
}

// TitleQuality searches the title of every fetched page with a title and
// counts how often the page comes first.
func TitleQuality(idx *Index) Quality { return TitleQualityWith(idx, SearchOptions{}) }

// TitleQualityWith is TitleQuality searching with opt (a model, weights).
func TitleQualityWith(idx *Index, opt SearchOptions) Quality {
	opt.N, opt.NoSnippets, opt.Literal = 1, true, true
	var q Quality
	var docs []uint32
	idx.eachLive(func(d uint32, e DocEntry) error {
		if e.Status == StatusFetched {
			docs = append(docs, d)
		}
		return nil
	})
	slices.Sort(docs)
	for _, d := range docs {
		u, title, err := idx.Info(d)
		if err != nil || title == "" {
			q.NoTitle++
			continue
		}
		q.Pages++
		resp, err := idx.Search(title, opt)
		if err == nil && len(resp.Results) > 0 && resp.Results[0].Doc == d {
			q.First++
			continue
		}
		m := Miss{Title: title, Want: u}
		if err == nil && len(resp.Results) > 0 {
			m.Got = resp.Results[0].URL
		}
		q.Misses = append(q.Misses, m)
	}
	return q
}

// ShortSet is the result of a short-query evaluation: queries of the two
// or three leading content words of a page's title (or of its first
// heading) that no other page's title (heading) begins with, so each
// query names one page, as a person recalls it.
type ShortSet struct {
	Name                 string
	Queries, First, Top3 int
	Misses               []ShortMiss
}

// ShortMiss is a short query whose page did not come first.
type ShortMiss struct {
	Query, Want, Got string
	Position         int // of the page, 0 if not in the first 10
}

// FirstRatio and Top3Ratio are the shares of queries whose page came
// first, and in the first three.
func (s ShortSet) FirstRatio() float64 { return ratio(s.First, s.Queries) }
func (s ShortSet) Top3Ratio() float64  { return ratio(s.Top3, s.Queries) }

func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// KnownItem is a query that names one page.
type KnownItem struct {
	Set   string // "title", "short title" or "short first heading"
	Query string
	Doc   uint32
	URL   string
}

// KnownItems lists the known-item queries of the fetched pages, in docID
// order within each set: each page's whole title, then the short queries
// of ShortQueries.
func KnownItems(idx *Index) ([]KnownItem, error) {
	var docs []uint32
	idx.eachLive(func(d uint32, e DocEntry) error {
		if e.Status == StatusFetched {
			docs = append(docs, d)
		}
		return nil
	})
	slices.Sort(docs)
	an := idx.analyzers.Get().(*analysis.Analyzer)
	defer idx.analyzers.Put(an)
	type words struct{ terms, written []string }
	content := func(s string) words {
		var w words
		an.Tokens([]byte(s), func(t analysis.Token) {
			if !t.Stop && !t.Whole && len(w.terms) < 3 {
				w.terms = append(w.terms, string(t.Term))
				w.written = append(w.written, strings.ToLower(s[t.Start:t.End]))
			}
		})
		return w
	}
	titles := make([]words, len(docs))
	heads := make([]words, len(docs))
	urls := make([]string, len(docs))
	var out []KnownItem
	var d htmldoc.Doc
	for i, doc := range docs {
		u, body, err := idx.Page(doc)
		if err != nil {
			return nil, err
		}
		base, _ := url.Parse(u)
		d.Parse(body, base)
		urls[i] = u
		titles[i] = content(d.Title)
		heads[i] = content(firstHeading(&d))
		if _, title, err := idx.Info(doc); err == nil && title != "" {
			out = append(out, KnownItem{"title", title, doc, u})
		}
	}
	for _, set := range []struct {
		name string
		ws   []words
	}{{"short title", titles}, {"short first heading", heads}} {
		// How many pages begin with each prefix of 2 and of 3 terms.
		prefixes := map[string]int{}
		for _, w := range set.ws {
			for k := 2; k <= min(3, len(w.terms)); k++ {
				prefixes[strings.Join(w.terms[:k], " ")]++
			}
		}
		for i, w := range set.ws {
			k := 2
			for ; k <= len(w.terms); k++ {
				if prefixes[strings.Join(w.terms[:k], " ")] == 1 {
					break
				}
			}
			if k <= len(w.terms) { // else fewer than two content words, or shared by another page
				out = append(out, KnownItem{set.name, strings.Join(w.written[:k], " "), docs[i], urls[i]})
			}
		}
	}
	return out, nil
}

// ShortQueries searches the short queries of KnownItems with opt (N at
// least 10) and counts how often their page comes first and in the top 3.
func ShortQueries(idx *Index, opt SearchOptions) ([]ShortSet, error) {
	items, err := KnownItems(idx)
	if err != nil {
		return nil, err
	}
	opt.N = max(opt.N, 10)
	opt.NoSnippets, opt.Literal = true, true
	sets := []ShortSet{{Name: "title"}, {Name: "first heading"}}
	for _, it := range items {
		if it.Set == "title" {
			continue
		}
		s := &sets[0]
		if it.Set == "short first heading" {
			s = &sets[1]
		}
		resp, err := idx.Search(it.Query, opt)
		if err != nil {
			return nil, err
		}
		s.Queries++
		pos := 0
		for j, r := range resp.Results {
			if r.Doc == it.Doc {
				pos = j + 1
				break
			}
		}
		if pos == 1 {
			s.First++
		}
		if pos >= 1 && pos <= 3 {
			s.Top3++
		}
		if pos != 1 {
			m := ShortMiss{Query: it.Query, Position: pos, Want: it.URL}
			if len(resp.Results) > 0 {
				m.Got = resp.Results[0].URL
			}
			s.Misses = append(s.Misses, m)
		}
	}
	return sets, nil
}

// firstHeading is the text of the page's first heading of the largest
// size it has (h1, else h2, down to h4): a page's sidebar may lead with
// smaller headings ("Navigation") than its own.
func firstHeading(d *htmldoc.Doc) string {
	var top uint8
	for _, w := range d.Words {
		top = max(top, w.Font)
	}
	if top < 3 {
		return ""
	}
	start, end := -1, -1
	for _, w := range d.Words {
		if w.Font == top {
			if start < 0 {
				start = int(w.Start)
			}
			end = int(w.End)
		} else if start >= 0 {
			break
		}
	}
	return string(d.Text[start:end])
}
