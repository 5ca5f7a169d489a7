package barrel

import "slices"

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
func TitleQuality(idx *Index) Quality {
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
		resp, err := idx.Search(title, SearchOptions{N: 1, NoSnippets: true})
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
