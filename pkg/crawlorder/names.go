package crawlorder

import "fmt"

// Names lists the orders by name, as the command line takes them.
var Names = []string{"bfs", "fish", "shark", "best-first", "pagerank", "hits", "qlink-site", "qlink-links", "qlink-segment"}

// Config holds what the orders need; each order takes what it uses.
type Config struct {
	Topic     *Topic      // fish, shark, best-first
	Depth     int         // fish, shark: depth budget (default 3)
	Rebalance int         // pagerank, hits: recompute every this many pages (default 100)
	Stats     *QLinkStats // qlink-*
	Coef      float64     // qlink-links: ql(B) = Coef * ql(A) (default 0.5)
}

// NeedsTopic reports whether the order measures closeness to a topic.
func NeedsTopic(name string) bool { return name == "fish" || name == "shark" || name == "best-first" }

// NeedsQLinks reports whether the order extrapolates QLinks.
func NeedsQLinks(name string) bool { return len(name) > 6 && name[:6] == "qlink-" }

// New returns the order called name.
func New(name string, c Config) (Order, error) {
	if c.Depth <= 0 {
		c.Depth = 3
	}
	if c.Rebalance <= 0 {
		c.Rebalance = 100
	}
	if c.Coef == 0 {
		c.Coef = 0.5
	}
	if NeedsTopic(name) && c.Topic == nil {
		return nil, fmt.Errorf("order %s needs a topic", name)
	}
	if NeedsQLinks(name) && c.Stats == nil {
		return nil, fmt.Errorf("order %s: %w", name, ErrNoQLinks)
	}
	switch name {
	case "bfs":
		return NewBFS(), nil
	case "fish":
		return NewFish(c.Topic, c.Depth), nil
	case "shark":
		return NewShark(c.Topic, c.Depth), nil
	case "best-first":
		return NewBestFirst(c.Topic), nil
	case "pagerank":
		return NewPageRank(c.Rebalance), nil
	case "hits":
		return NewHITS(c.Rebalance), nil
	case "qlink-site":
		return NewQLinks(c.Stats, PerSite, c.Coef)
	case "qlink-links":
		return NewQLinks(c.Stats, AlongLinks, c.Coef)
	case "qlink-segment":
		return NewQLinks(c.Stats, PerSegment, c.Coef)
	}
	return nil, fmt.Errorf("order %q: want one of %v", name, Names)
}
