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

// addPageAt adds a page discovered at time t.
func (s *State) addPageAt(name string, t int64) uint32 {
	n := s.Len()
	id := s.AddPage([]byte(name))
	if int(id) == n {
		s.last[id] = t
	}
	return id
}
