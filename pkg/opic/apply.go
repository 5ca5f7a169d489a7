package opic

// AddItem adds an item's page and links to the graph, without a visit: the
// static computation's input. A record's links are added to those the page
// already has.
func (s *State) AddItem(it Item) {
	src := s.AddPage([]byte(it.URL))
	for _, l := range it.Links {
		s.AddLink(src, s.AddPage([]byte(l)))
	}
}

// Update applies one item of a batch to an adaptive OPIC state: a record
// with fetched_at is a visit (its links replace the page's links, new
// pages are discovered at its time; a record without links keeps the
// links known); anything else only adds pages and links.
func (s *State) Update(it Item) {
	if it.Kind != RecordItem || it.FetchedAt.IsZero() {
		s.AddItem(it)
		return
	}
	t := it.FetchedAt.Unix()
	id := s.addPageAt(it.URL, t)
	if it.HasLinks {
		links := make([]uint32, len(it.Links))
		for k, l := range it.Links {
			links[k] = s.addPageAt(l, t)
		}
		s.SetLinks(id, links)
	}
	s.Visit(id, t)
}

// addPageAt adds a page discovered at time t.
func (s *State) addPageAt(name string, t int64) uint32 {
	n := s.Len()
	id := s.AddPage([]byte(name))
	if int(id) == n {
		s.last[id] = t
	}
	return id
}

// Due returns the ids of the pages never visited or last visited at or
// before dueBefore (Unix seconds), most cash first (ties by name), at most
// n of them. With keep non-nil, only pages it keeps are considered (the
// pages of this state's shard, say).
func (s *State) Due(n int, dueBefore int64, keep func(name string) bool) []uint32 {
	var ids []uint32
	for id := range s.cash {
		if (s.visits[id] == 0 || s.last[id] <= dueBefore) && (keep == nil || keep(s.names.Name(uint32(id)))) {
			ids = append(ids, uint32(id))
		}
	}
	return s.top(ids, n, func(id uint32) float64 { return s.cash[id] })
}

// Ranked returns page ids by importance, most important first (ties by
// name), at most n of them (all if n <= 0), and the importance of every page.
func (s *State) Ranked(n int) ([]uint32, []float64) {
	imp := s.Importance()
	ids := make([]uint32, len(imp))
	for i := range ids {
		ids[i] = uint32(i)
	}
	return s.top(ids, n, func(id uint32) float64 { return imp[id] }), imp
}
