package opic

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// applyBatch applies items to an unsharded state as one batch.
func applyBatch(s *State, items ...Item) {
	b, err := s.Begin()
	if err != nil {
		panic(err)
	}
	for _, it := range items {
		b.Add(it)
	}
	if b.End() != nil {
		panic("a sharded state")
	}
}

// crawlBatches makes turns of fetch records over a few hosts: pages link
// to pages of any host, some fetches fail (no links), some pages are
// fetched twice in a turn, seeds come as plain URLs.
func crawlBatches(seed uint64, turns, perTurn int) [][]Item {
	rng := rand.New(rand.NewPCG(seed, 1))
	hosts := []string{"a.test", "b.test", "c.test", "d.test", "e.test", "www.f.test"}
	page := func() string {
		return fmt.Sprintf("http://%s/p%d", hosts[rng.IntN(len(hosts))], rng.IntN(60))
	}
	var batches [][]Item
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	for turn := range turns {
		var items []Item
		if turn == 0 {
			for _, h := range hosts {
				items = append(items, Item{Kind: PageItem, URL: "http://" + h + "/p0"})
			}
		}
		for k := range perTurn {
			it := Item{Kind: RecordItem, URL: page(), FetchedAt: t0.Add(time.Duration(turn*24+k%7) * time.Hour)}
			if rng.IntN(10) > 0 {
				it.HasLinks = true
				for range rng.IntN(12) {
					it.Links = append(it.Links, page())
				}
			}
			items = append(items, it)
		}
		items = append(items, Item{Kind: EdgeItem, URL: page(), Links: []string{page()}})
		batches = append(batches, items)
	}
	return batches
}

// A crawl split into shards, each visiting its own hosts' pages and
// exchanging outboxes, ends with exactly the pages, cash, history and visits
// of the same crawl in one state, and the same ranking and frontier.
func TestShardsReachTheUnshardedState(t *testing.T) {
	for _, n := range []int{2, 3, 5} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			whole := New(0.85)
			whole.Window = 100 * time.Hour
			shards := make([]*State, n)
			for i := range shards {
				shards[i] = New(0.85)
				shards[i].Window = whole.Window
				shards[i].ShardI, shards[i].ShardN = i, n
			}
			for _, items := range crawlBatches(uint64(n), 6, 150) {
				applyBatch(whole, items...)
				var in Inbox
				for _, s := range shards {
					b, err := s.Begin()
					if err != nil {
						t.Fatal(err)
					}
					for _, it := range items {
						b.Add(it)
					}
					// Through the text form, as between machines.
					for _, line := range strings.SplitAfter(string(b.End().AppendLines(nil)), "\n") {
						if line == "" {
							continue
						}
						if err := in.Add([]byte(line)); err != nil {
							t.Fatalf("outbox line %q: %v", line, err)
						}
					}
				}
				for _, s := range shards {
					if _, err := s.Begin(); err != ErrAwaitingExchange {
						t.Fatalf("a new batch before the exchange: %v", err)
					}
					if err := s.Exchange(&in); err != nil {
						t.Fatal(err)
					}
				}
			}
			pages := 0
			for _, s := range shards {
				for id := range uint32(s.Len()) {
					name := s.Name(id)
					if !s.Owns(name) {
						if c := s.Page(id).Cash; c != 0 {
							t.Errorf("shard %d holds cash %g of %s, a page of another shard", s.ShardI, c, name)
						}
						continue
					}
					pages++
					wid, ok := whole.Lookup(name)
					if !ok {
						t.Fatalf("shard %d has %s, the whole crawl not", s.ShardI, name)
					}
					if got, want := s.Page(id), whole.Page(wid); got.Cash != want.Cash || got.History != want.History ||
						got.Visits != want.Visits || got.LastVisit != want.LastVisit {
						t.Errorf("%s: %+v in shard %d, %+v unsharded", name, got, s.ShardI, want)
					}
				}
				if s.virtCash != whole.virtCash {
					t.Errorf("virtual page's cash %g in shard %d, %g unsharded", s.virtCash, s.ShardI, whole.virtCash)
				}
			}
			if pages != whole.Len() {
				t.Errorf("%d pages over the shards, %d unsharded", pages, whole.Len())
			}
			if got, want := entries(Ranking(shards, 40)), entries(Ranking([]*State{whole}, 40)); got != want {
				t.Errorf("rankings differ:\n%s\n%s", got, want)
			}
			due := fetchedAt("2026-11-05T00:00:00Z").Unix()
			if got, want := entries(Frontier(shards, 40, due)), entries(Frontier([]*State{whole}, 40, due)); got != want {
				t.Errorf("frontiers differ:\n%s\n%s", got, want)
			}
			if whole.Len() < 200 {
				t.Errorf("only %d pages: the test checks little", whole.Len())
			}
		})
	}
}

// entries prints a ranking or a frontier, page ids left out (they are
// each state's own).
func entries(es []Entry) string {
	var b strings.Builder
	for _, e := range es {
		fmt.Fprintf(&b, "%s %v %v %d %d\n", e.URL, e.Page.Cash, e.Page.History, e.Page.Visits, e.Page.LastVisit)
	}
	return b.String()
}

// Cash is exact: after any batches the pages and the virtual page hold
// exactly 1.
func TestBatchConservesCashExactly(t *testing.T) {
	s := New(0.85)
	for _, items := range crawlBatches(9, 8, 200) {
		applyBatch(s, items...)
		total := s.virtCash
		for id := range uint32(s.Len()) {
			total += s.Page(id).Cash
		}
		if total != 1 {
			t.Fatalf("total cash %v, want exactly 1", total)
		}
	}
}

// The exchange refuses what does not complete the batch it awaits, and
// leaves the state as it was.
func TestExchangeChecksTheOutboxes(t *testing.T) {
	mk := func(i int) (*State, *Outbox) {
		s := New(0.85)
		s.ShardI, s.ShardN = i, 2
		b, _ := s.Begin()
		b.Add(Item{Kind: RecordItem, URL: "http://a.test/", HasLinks: true, Links: []string{"http://b.test/", "http://c.test/"},
			FetchedAt: fetchedAt("2026-11-01T00:00:00Z")})
		return s, b.End()
	}
	s0, o0 := mk(0)
	_, o1 := mk(1)
	inbox := func(boxes ...*Outbox) *Inbox {
		var in Inbox
		for _, o := range boxes {
			for _, line := range strings.SplitAfter(string(o.AppendLines(nil)), "\n") {
				if line != "" {
					if err := in.Add([]byte(line)); err != nil {
						t.Fatal(err)
					}
				}
			}
		}
		return &in
	}
	for _, c := range []struct {
		in   *Inbox
		want string
	}{
		{inbox(o0), "the outbox of shard 1/2 is missing"},
		{inbox(o0, o0, o1), "two outboxes of shard 0/2"},
		{&Inbox{Summaries: []Summary{o0.Summary, {Shard: 1, Shards: 2, Batch: 7}}}, "is of batch 7, the state awaits batch 1"},
		{&Inbox{Summaries: []Summary{{Shard: 0, Shards: 3, Batch: 1}}}, "an outbox of shard 0/3, but the state is shard 0/2"},
	} {
		before, _ := s0.MarshalBinary()
		if err := s0.Exchange(c.in); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("exchange: %v, want %q", err, c.want)
		}
		if after, _ := s0.MarshalBinary(); string(after) != string(before) {
			t.Errorf("a refused exchange changed the state")
		}
	}
	if err := s0.Exchange(inbox(o1, o0)); err != nil {
		t.Fatal(err)
	}
	if err := s0.Exchange(inbox(o1, o0)); err == nil || !strings.Contains(err.Error(), "no batch of this state awaits") {
		t.Errorf("a second exchange: %v", err)
	}
	for _, bad := range []string{`{"url":"http://x/"}`, `{"url":"http://x/","opic_cash":2}`, `{"opic_shard":"1/1"}`,
		`{"opic_shard":"0/2","opic_batch":1.5,"opic_teleport":0,"opic_pages":1}`, `not json`} {
		var in Inbox
		if err := in.Add([]byte(bad)); err == nil {
			t.Errorf("outbox line %s accepted", bad)
		}
	}
}
