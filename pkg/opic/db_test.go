package opic

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// sameStates reports the first difference between two in-memory states,
// page by page by name (pages of other shards left out).
func sameStates(got, want *State) error {
	want.Compact() // edges added by the last batch are pending there
	if got.virtCash != want.virtCash {
		return fmt.Errorf("virtual cash %v, want %v", got.virtCash, want.virtCash)
	}
	n := 0
	for id := range uint32(got.Len()) {
		name := got.Name(id)
		if !got.Owns(name) {
			if c := got.Page(id).Cash; c != 0 {
				return fmt.Errorf("%s, a page of another shard, holds %v", name, c)
			}
			continue
		}
		n++
		wid, ok := want.Lookup(name)
		if !ok {
			return fmt.Errorf("page %s is not in the reference", name)
		}
		g, w := got.Page(id), want.Page(wid)
		if g.Cash != w.Cash || g.History != w.History || g.Visits != w.Visits || g.LastVisit != w.LastVisit {
			return fmt.Errorf("%s: %+v, want %+v", name, g, w)
		}
		gl, wl := got.Links(id), want.Links(wid)
		if len(gl) != len(wl) {
			return fmt.Errorf("%s: %d links, want %d", name, len(gl), len(wl))
		}
		for k := range gl {
			if got.Name(gl[k]) != want.Name(wl[k]) && len(gl) > 0 {
				// links are sorted by id, which may differ: compare as sets
				return sameLinkSets(got, want, gl, wl, name)
			}
		}
	}
	wn := 0
	for id := range uint32(want.Len()) {
		if want.Owns(want.Name(id)) {
			wn++
		}
	}
	if n != wn {
		return fmt.Errorf("%d pages, want %d", n, wn)
	}
	return nil
}

func sameLinkSets(got, want *State, gl, wl []uint32, name string) error {
	set := map[string]bool{}
	for _, l := range wl {
		set[want.Name(l)] = true
	}
	for _, l := range gl {
		if !set[got.Name(l)] {
			return fmt.Errorf("%s: link to %s, not in the reference", name, got.Name(l))
		}
	}
	return nil
}

func dbState(t *testing.T, d *DB) *State {
	t.Helper()
	s, err := d.State()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// The state on disk reaches, batch after batch, exactly the cash, history,
// visits and links of the in-memory state, unsharded and as 2, 3 and 5
// shards.
func TestDBMatchesTheInMemoryState(t *testing.T) {
	dir := t.TempDir()
	whole := New(0.85)
	whole.Window = 100 * time.Hour
	d, err := Open(filepath.Join(dir, "whole.opic"), DBOptions{Damping: 0.85, Window: whole.Window})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	batches := crawlBatches(7, 6, 150)
	for k, items := range batches {
		applyBatch(whole, items...)
		if _, err := d.Apply(fmt.Sprintf("b%02d", k), items); err != nil {
			t.Fatal(err)
		}
		if err := sameStates(dbState(t, d), whole); err != nil {
			t.Fatalf("batch %d: %v", k, err)
		}
	}
	for _, n := range []int{2, 3, 5} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			shards := make([]*DB, n)
			for i := range shards {
				shards[i], err = Open(filepath.Join(dir, fmt.Sprintf("s%d.%d.opic", n, i)),
					DBOptions{Damping: 0.85, Window: whole.Window, ShardI: i, ShardN: n})
				if err != nil {
					t.Fatal(err)
				}
				defer shards[i].Close()
			}
			for k, items := range batches {
				id := fmt.Sprintf("b%02d", k)
				var in Inbox
				for _, s := range shards {
					res, err := s.Apply(id, items)
					if err != nil {
						t.Fatal(err)
					}
					for _, line := range strings.SplitAfter(string(res.Outbox), "\n") {
						if line != "" {
							if err := in.Add([]byte(line)); err != nil {
								t.Fatal(err)
							}
						}
					}
				}
				for _, s := range shards {
					if _, err := s.Exchange(id, &in); err != nil {
						t.Fatal(err)
					}
				}
			}
			var states []*State
			for _, s := range shards {
				st := dbState(t, s)
				states = append(states, st)
				if err := sameStates(st, whole); err != nil && !strings.Contains(err.Error(), "pages, want") {
					t.Fatalf("shard %d: %v", st.ShardI, err)
				}
			}
			if got, want := entries(Ranking(states, 0)), entries(Ranking([]*State{whole}, 0)); got != want {
				t.Errorf("rankings differ:\n%s\n%s", got, want)
			}
		})
	}
	if whole.Len() < 200 {
		t.Errorf("only %d pages: the test checks little", whole.Len())
	}
}

// The same batch ID again is a no-op; a sharded state refuses a new batch
// and an exchange of another ID.
func TestDBBatchIDs(t *testing.T) {
	dir := t.TempDir()
	d, err := Open(filepath.Join(dir, "s.opic"), DBOptions{Damping: 0.85})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	batches := crawlBatches(3, 2, 50)
	if _, err := d.Apply("000001-x", batches[0]); err != nil {
		t.Fatal(err)
	}
	before := dbState(t, d)
	if _, err := d.Apply("000001-x", batches[1]); !errors.Is(err, ErrBatchApplied) {
		t.Fatalf("the same ID again: %v", err)
	}
	if err := sameStates(dbState(t, d), before); err != nil {
		t.Fatalf("a repeated batch changed the state: %v", err)
	}
	if _, err := d.Apply("000000-x", batches[1]); err == nil || !strings.Contains(err.Error(), "older than") {
		t.Fatalf("an older ID: %v", err)
	}

	s0, err := Open(filepath.Join(dir, "s0.opic"), DBOptions{Damping: 0.85, ShardI: 0, ShardN: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer s0.Close()
	res, err := s0.Apply("000001-x", batches[0])
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s0.Apply("000001-x", batches[0]); !errors.Is(err, ErrBatchApplied) {
		t.Fatalf("the same ID awaiting its exchange: %v", err)
	}
	if _, err := s0.Apply("000002-x", batches[1]); !errors.Is(err, ErrAwaitingExchange) {
		t.Fatalf("a new batch before the exchange: %v", err)
	}
	var in Inbox
	for _, line := range strings.SplitAfter(string(res.Outbox), "\n") {
		if line != "" {
			in.Add([]byte(line))
		}
	}
	if _, err := s0.Exchange("000002-x", &in); err == nil || !strings.Contains(err.Error(), `awaits the exchange of batch "000001-x"`) {
		t.Fatalf("an exchange of another batch: %v", err)
	}
	_, stored, err := s0.LastChanges()
	if err != nil || string(stored) != string(res.Outbox) {
		t.Fatalf("stored outbox %q, %v", stored, err)
	}
}

// An update reads and writes the pages of its batch, however many pages
// the state holds.
func TestDBUpdateTouchesOnlyTheBatch(t *testing.T) {
	count := func(pages int) (reads, writes int) {
		d, err := Open(filepath.Join(t.TempDir(), "s.opic"), DBOptions{Damping: 0.85})
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		// A state of pages pages: a chain of records, 100 a batch.
		t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
		for k := 0; k < pages; k += 100 {
			var items []Item
			for i := k; i < k+100; i++ {
				items = append(items, Item{Kind: RecordItem, URL: fmt.Sprintf("http://h%d.test/%d", i%7, i),
					HasLinks: true, Links: []string{fmt.Sprintf("http://h%d.test/%d", (i+1)%7, i+1)}, FetchedAt: t0})
			}
			if _, err := d.Apply("", items); err != nil {
				t.Fatal(err)
			}
		}
		// One batch: 10 old pages visited, linking to 5 old and 5 new pages each.
		var items []Item
		for i := range 10 {
			it := Item{Kind: RecordItem, URL: fmt.Sprintf("http://h%d.test/%d", i%7, i), HasLinks: true, FetchedAt: t0.Add(time.Hour)}
			for j := range 5 {
				it.Links = append(it.Links, fmt.Sprintf("http://h%d.test/%d", (20+i*5+j)%7, 20+i*5+j), fmt.Sprintf("http://new.test/%d/%d", i, j))
			}
			items = append(items, it)
		}
		d.pageReads, d.pageWrites = 0, 0
		if _, err := d.Apply("", items); err != nil {
			t.Fatal(err)
		}
		return d.pageReads, d.pageWrites
	}
	r1, w1 := count(200)
	r2, w2 := count(5000)
	// 10 visited pages + 50 old link targets read; those + 50 new pages written.
	if r1 != 60 || w1 != 110 || r2 != r1 || w2 != w1 {
		t.Errorf("page reads and writes: %d and %d on 200 pages, %d and %d on 5000; want 60 and 110 on both", r1, w1, r2, w2)
	}
}

// A format 2 state is migrated in place by the first update; a foreign,
// truncated or corrupt file is refused with its path and left as it was.
func TestDBMigratesAndRefuses(t *testing.T) {
	dir := t.TempDir()
	old := New(0.85)
	old.Window = 100 * time.Hour
	batches := crawlBatches(5, 4, 100)
	for _, items := range batches[:2] {
		applyBatch(old, items...)
	}
	path := filepath.Join(dir, "v2.opic")
	if err := old.Save(path); err != nil {
		t.Fatal(err)
	}
	if s, err := LoadState(path); err != nil || sameStates(s, old) != nil {
		t.Fatalf("reading a format 2 state: %v", err)
	}
	d, err := Open(path, DBOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, items := range batches[2:] {
		applyBatch(old, items...)
		if _, err := d.Apply("", items); err != nil {
			t.Fatal(err)
		}
	}
	if err := sameStates(dbState(t, d), old); err != nil {
		t.Fatalf("after migration: %v", err)
	}
	d.Close()
	if s, err := LoadState(path); err != nil || sameStates(s, old) != nil {
		t.Fatalf("LoadState after migration: %v", err)
	}
	good, _ := os.ReadFile(path)
	for _, c := range []struct {
		name string
		data []byte
		want string
	}{
		{"foreign", []byte("http://a.test/\n"), "not an opic state file"},
		{"empty", nil, "truncated opic state: 0 bytes"},
		{"truncated", good[:len(good)/2], "truncated opic state"},
		{"meta", append(make([]byte, 8192), good[8192:]...), "not an opic state file"},
	} {
		p := filepath.Join(dir, c.name+".opic")
		os.WriteFile(p, c.data, 0o644)
		_, err := Open(p, DBOptions{})
		if err == nil || !strings.Contains(err.Error(), p+": ") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q with the path", c.name, err, c.want)
		}
		if after, _ := os.ReadFile(p); string(after) != string(c.data) {
			t.Errorf("%s: the file was changed", c.name)
		}
	}
}

// A run killed with SIGKILL leaves its temporary files beside the state;
// the next Open removes them, and nothing else.
func TestOpenRemovesStaleTemps(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "crawl.opic")
	d, err := Open(path, DBOptions{Damping: 0.85})
	if err != nil {
		t.Fatal(err)
	}
	d.Close()
	stale := []string{".crawl.opic.tmp1234", ".crawl.opic.migrate"}
	kept := []string{"other.opic", ".other.opic.tmp9", "crawl.opic.tmp-not-ours"}
	for _, n := range append(append([]string{}, stale...), kept...) {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("partial"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	d, err = Open(path, DBOptions{Damping: 0.85})
	if err != nil {
		t.Fatal(err)
	}
	d.Close()
	for _, n := range stale {
		if _, err := os.Stat(filepath.Join(dir, n)); !os.IsNotExist(err) {
			t.Errorf("stale %s not removed: %v", n, err)
		}
	}
	for _, n := range kept {
		if _, err := os.Stat(filepath.Join(dir, n)); err != nil {
			t.Errorf("%s removed: %v", n, err)
		}
	}
}
