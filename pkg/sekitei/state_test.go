package sekitei

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/sekitei/crawlkit/pkg/boltstate"

	"github.com/sekitei/crawlkit/pkg/record"
)

// fetchRecord is a fetch record as fetch writes it (the fields sekitei reads
// and one it must not care about).
func fetchRecord(t testing.TB, u string, links []string, errText string) *record.Record {
	r := record.New(u)
	h, _ := strings.CutPrefix(u, "http://")
	h, _, _ = strings.Cut(h, "/")
	r.SetString("host", h)
	r.SetInt("status", 200)
	r.SetStrings("links", links)
	if errText != "" {
		r.SetString("error", errText)
	}
	line := r.AppendJSON(nil)
	p, err := record.Parse(line)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// siteGen makes URLs of a few layouts on numbered hosts, the way a crawl
// meets them: news articles, wiki titles, print pages, searches.
type siteGen struct {
	rng   *rand.Rand
	hosts int
}

func (g *siteGen) host() string { return fmt.Sprintf("h%d.example", g.rng.IntN(g.hosts)) }

func (g *siteGen) urlOn(host string) string {
	n := g.rng.IntN(1 << 30)
	switch g.rng.IntN(4) {
	case 0:
		return fmt.Sprintf("http://%s/news/%d/%02d/%02d/story%d/", host, 2000+n%25, 1+n%12, 1+n%28, n)
	case 1:
		return fmt.Sprintf("http://%s/wiki/Title_%d", host, n)
	case 2:
		return fmt.Sprintf("http://%s/print/%d.htm", host, n)
	default:
		return fmt.Sprintf("http://%s/search?q=w%d&page=%d", host, n, n%10)
	}
}

// batch makes n fetch records with the given links each; robots.txt
// refuses the print pages.
func (g *siteGen) batch(t testing.TB, n, links int) []*record.Record {
	recs := make([]*record.Record, n)
	for i := range recs {
		h := g.host()
		u := g.urlOn(h)
		ls := make([]string, links)
		for j := range ls {
			if g.rng.IntN(10) == 0 {
				ls[j] = g.urlOn(g.host())
			} else {
				ls[j] = g.urlOn(h)
			}
		}
		errText := ""
		if strings.Contains(u, "/print/") {
			errText = "robots: disallowed"
			ls = nil
		}
		recs[i] = fetchRecord(t, u, ls, errText)
	}
	return recs
}

func openTestState(t testing.TB, path string, opt StateOptions) *State {
	t.Helper()
	st, err := OpenState(path, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func TestDecideTable(t *testing.T) {
	for _, c := range []struct {
		name  string
		use   SegmentUse
		block int
		want  Verdict
	}{
		{"no quota entry passes", SegmentUse{}, 5, Admitted},
		{"no quota entry, robots refused every try", SegmentUse{Used: 5, Refused: 5}, 5, RobotsBlocked},
		{"under quota", SegmentUse{HasQuota: true, Quota: 3, Used: 2}, 5, Admitted},
		{"quota used up", SegmentUse{HasQuota: true, Quota: 3, Used: 3}, 5, OverQuota},
		{"quota 0", SegmentUse{HasQuota: true, Quota: 0}, 5, OverQuota},
		{"refused every time, block reached", SegmentUse{HasQuota: true, Quota: 100, Used: 5, Refused: 5}, 5, RobotsBlocked},
		{"refused every time, fewer tries than block", SegmentUse{HasQuota: true, Quota: 100, Used: 4, Refused: 4}, 5, Admitted},
		{"one try fetched", SegmentUse{HasQuota: true, Quota: 100, Used: 6, Refused: 5}, 5, Admitted},
		{"block 0 never blocks", SegmentUse{HasQuota: true, Quota: 100, Used: 50, Refused: 50}, 0, Admitted},
		{"blocked and over quota: robots", SegmentUse{HasQuota: true, Quota: 5, Used: 5, Refused: 5}, 5, RobotsBlocked},
	} {
		if got := Decide(c.use, c.block); got != c.want {
			t.Errorf("%s: Decide(%+v, %d) = %v, want %v", c.name, c.use, c.block, got, c.want)
		}
	}
}

// recount is the loop's old way: every record of the whole history, and
// every known URL, assigned to the state's current segments.
func recount(t *testing.T, st *State, history [][]*record.Record) {
	t.Helper()
	known := map[string]map[string]bool{}
	addKnown := func(u string) {
		h, _, _ := strings.Cut(strings.TrimPrefix(u, "http://"), "/")
		if known[h] == nil {
			known[h] = map[string]bool{}
		}
		known[h][u] = true
	}
	type use struct{ fetched, refused int }
	uses := map[string]map[int]*use{}
	hosts, err := st.Hosts()
	if err != nil {
		t.Fatal(err)
	}
	infos := map[string]*hostInfo{}
	for _, h := range hosts {
		segs, n, err := st.HostSegments(h)
		if err != nil {
			t.Fatal(err)
		}
		infos[h] = &hostInfo{Known: n, Segments: segs}
		uses[h] = map[int]*use{}
	}
	for _, b := range history {
		for _, r := range b {
			addKnown(r.URL())
			var links []string
			r.Decode("links", &links)
			for _, l := range links {
				addKnown(l)
			}
			h := record.RecordHost(r)
			i, err := infos[h].segmentOf(r.URL())
			if err != nil || i < 0 {
				t.Fatalf("%s: no segment (%v)", r.URL(), err)
			}
			if uses[h][i] == nil {
				uses[h][i] = &use{}
			}
			uses[h][i].fetched++
			if e, _ := r.String("error"); strings.HasPrefix(e, "robots:") {
				uses[h][i].refused++
			}
		}
	}
	if len(known) != len(hosts) {
		t.Fatalf("%d hosts known, state has %d", len(known), len(hosts))
	}
	for h, info := range infos {
		if info.Known != len(known[h]) {
			t.Errorf("%s: state knows %d URLs, history has %d", h, info.Known, len(known[h]))
		}
		urls := make([]int, len(info.Segments))
		for u := range known[h] {
			i, _ := info.segmentOf(u)
			urls[i]++
		}
		for i, sg := range info.Segments {
			want := use{}
			if u := uses[h][i]; u != nil {
				want = *u
			}
			if sg.Fetched != want.fetched || sg.Refused != want.refused || sg.URLs != urls[i] {
				t.Errorf("%s segment %d %s: state fetched %d refused %d urls %d, recount %d %d %d",
					h, i, sg.Regex, sg.Fetched, sg.Refused, sg.URLs, want.fetched, want.refused, urls[i])
			}
		}
	}
}

func TestQuotaUseCarriedOverEqualsRecount(t *testing.T) {
	g := &siteGen{rng: rand.New(rand.NewPCG(1, 2)), hosts: 8}
	st := openTestState(t, filepath.Join(t.TempDir(), "sekitei.state"), StateOptions{SiteQuota: 200, MinQuota: 10})
	var history [][]*record.Record
	reclustered := 0
	for turn := 0; turn < 30; turn++ {
		b := g.batch(t, 40, 10)
		// Recrawls: some URLs fetched again in a later turn.
		if turn > 0 {
			prev := history[turn-1]
			b = append(b, prev[:5]...)
		}
		stats, err := st.Apply(fmt.Sprintf("%06d-batch", turn), b, nil)
		if err != nil {
			t.Fatal(err)
		}
		reclustered += stats.Reclustered
		history = append(history, b)
	}
	if reclustered < 8 || reclustered >= 30*8 {
		t.Errorf("%d re-clusterings over 30 turns of 8 hosts: want more than one per host, fewer than one per host and turn", reclustered)
	}
	recount(t, st, history)
}

func TestRegrowThreshold(t *testing.T) {
	g := &siteGen{rng: rand.New(rand.NewPCG(3, 4)), hosts: 1}
	st := openTestState(t, filepath.Join(t.TempDir(), "s"), StateOptions{SiteQuota: 100, MinQuota: 5, Regrow: 0.25})
	host := "h0.example"
	links := func(n int) []string {
		ls := make([]string, n)
		for i := range ls {
			ls[i] = g.urlOn(host)
		}
		return ls
	}
	if _, err := st.Apply("1", []*record.Record{fetchRecord(t, "http://h0.example/", links(399), "")}, nil); err != nil {
		t.Fatal(err)
	}
	segs, known, _ := st.HostSegments(host)
	if known != 400 || len(segs) < 2 {
		t.Fatalf("first batch: %d known, %d segments", known, len(segs))
	}
	info := func() *hostInfo {
		var h *hostInfo
		st.db.View(func(tx *boltstate.Tx) error { h, _ = st.hostInfo(tx, host); return nil })
		return h
	}
	if info().ClusteredAt != 400 {
		t.Fatalf("clustered at %d, want 400", info().ClusteredAt)
	}
	// 99 new URLs: 499 < 400*1.25, the segments stay and count the new URLs.
	st.Apply("2", []*record.Record{fetchRecord(t, "http://h0.example/", links(99), "")}, nil)
	after := info()
	if after.ClusteredAt != 400 || after.Known != 499 {
		t.Fatalf("grown by less than a quarter: clustered at %d, known %d", after.ClusteredAt, after.Known)
	}
	total := 0
	for i, sg := range after.Segments {
		if sg.Regex != segs[i].Regex {
			t.Errorf("segment %d changed from %s to %s", i, segs[i].Regex, sg.Regex)
		}
		total += sg.URLs
	}
	if total != 499 {
		t.Errorf("segments count %d URLs, want 499", total)
	}
	// One more: 500 >= 400*1.25, re-clustered.
	stats, _ := st.Apply("3", []*record.Record{fetchRecord(t, "http://h0.example/", links(1), "")}, nil)
	if stats.Reclustered != 1 || info().ClusteredAt != 500 {
		t.Errorf("grown by a quarter: %d re-clustered, clustered at %d", stats.Reclustered, info().ClusteredAt)
	}
}

func TestBatchAppliedOnce(t *testing.T) {
	g := &siteGen{rng: rand.New(rand.NewPCG(5, 6)), hosts: 3}
	st := openTestState(t, filepath.Join(t.TempDir(), "s"), StateOptions{SiteQuota: 100})
	b := g.batch(t, 20, 5)
	if _, err := st.Apply("000002-x", b, nil); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, st)
	stats, err := st.Apply("000002-x", b, nil)
	if err != nil || !stats.Skipped {
		t.Fatalf("same batch again: %+v, %v", stats, err)
	}
	if after := snapshot(t, st); after != before {
		t.Errorf("same batch again changed the state")
	}
	if _, err := st.Apply("000001-x", b, nil); err == nil || !strings.Contains(err.Error(), "sorts before") {
		t.Errorf("older batch: %v", err)
	}
	if id, _ := st.LastBatch(); id != "000002-x" {
		t.Errorf("last batch %q", id)
	}
}

// snapshot describes a state's hosts and segments.
func snapshot(t *testing.T, st *State) string {
	hosts, err := st.Hosts()
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, h := range hosts {
		segs, n, _ := st.HostSegments(h)
		fmt.Fprintf(&b, "%s %d %v\n", h, n, segs)
	}
	return b.String()
}

func TestGoodMarks(t *testing.T) {
	st := openTestState(t, filepath.Join(t.TempDir(), "s"), StateOptions{SiteQuota: 100})
	var links []string
	for i := 0; i < 50; i++ {
		links = append(links, fmt.Sprintf("http://a.example/news/%d/", i), fmt.Sprintf("http://a.example/wiki/T%d", i))
	}
	good := &GoodURLs{URLs: []string{"http://a.example/wiki/T1", "http://a.example/wiki/T2", "http://a.example/wiki/Later"}, Digest: "d1"}
	if _, err := st.Apply("1", []*record.Record{fetchRecord(t, "http://a.example/", links, "")}, good); err != nil {
		t.Fatal(err)
	}
	goodOf := func() int {
		segs, _, _ := st.HostSegments("a.example")
		n := 0
		for _, sg := range segs {
			n += sg.Good
		}
		return n
	}
	if g := goodOf(); g != 2 {
		t.Errorf("%d good URLs counted, want 2 (the third is not known yet)", g)
	}
	st.Apply("2", []*record.Record{fetchRecord(t, "http://a.example/wiki/Later", nil, "")}, good)
	if g := goodOf(); g != 3 {
		t.Errorf("%d good URLs counted after the third came, want 3", g)
	}
}

func TestShardKeepsItsHosts(t *testing.T) {
	g := &siteGen{rng: rand.New(rand.NewPCG(7, 8)), hosts: 20}
	path := filepath.Join(t.TempDir(), "s.1")
	st := openTestState(t, path, StateOptions{Shard: record.Shard{I: 1, N: 3}})
	if _, err := st.Apply("1", g.batch(t, 50, 5), nil); err != nil {
		t.Fatal(err)
	}
	hosts, _ := st.Hosts()
	if len(hosts) == 0 {
		t.Fatal("no hosts kept")
	}
	for _, h := range hosts {
		if record.ShardOf(h, 3) != 1 {
			t.Errorf("host %s of shard %d in state of shard 1/3", h, record.ShardOf(h, 3))
		}
	}
	st.Close()
	for _, sh := range []record.Shard{{}, {I: 0, N: 3}, {I: 1, N: 4}} {
		_, err := OpenState(path, StateOptions{Shard: sh})
		if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "shard 1/3") {
			t.Errorf("opened with shard %v: %v", sh, err)
		}
	}
}

func TestBadStatesRefused(t *testing.T) {
	dir := t.TempDir()
	g := &siteGen{rng: rand.New(rand.NewPCG(9, 10)), hosts: 4}
	good := filepath.Join(dir, "good.state")
	st, err := OpenState(good, StateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Apply("1", g.batch(t, 100, 10), nil); err != nil {
		t.Fatal(err)
	}
	st.Close()
	data, _ := os.ReadFile(good)

	// A version 1 state: its values were stored bare.
	other := filepath.Join(dir, "v1.state")
	os.WriteFile(other, data, 0o644)
	db, _ := bolt.Open(other, 0o644, nil)
	db.Update(func(tx *bolt.Tx) error { return tx.Bucket(bucketMeta).Put(keyVersion, []byte("1")) })
	db.Close()

	cases := map[string][]byte{
		"truncated.state": data[:len(data)/3],
		"empty.state":     {},
		"garbage.state":   bytes.Repeat([]byte("not a state\n"), 2000),
		"zeroed.state":    append(append([]byte{}, data[:8192]...), make([]byte, len(data)-8192)...),
	}
	for name, b := range cases {
		os.WriteFile(filepath.Join(dir, name), b, 0o644)
	}
	for _, name := range []string{"truncated.state", "empty.state", "garbage.state", "zeroed.state", "v1.state"} {
		path := filepath.Join(dir, name)
		before, _ := os.ReadFile(path)
		st, err := OpenState(path, StateOptions{})
		if err == nil {
			// Some damage only shows when the pages are read.
			_, err = st.Apply("2", g.batch(t, 100, 10), nil)
			st.Close()
		}
		var se *StateError
		if err == nil || !errors.As(err, &se) || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: %v, want a StateError naming the path", name, err)
		}
		if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
			t.Errorf("%s: the refused state was written", name)
		}
	}
	if _, err := OpenState(filepath.Join(dir, "v1.state"), StateOptions{}); err == nil || !strings.Contains(err.Error(), "state version 1, this sekitei reads version 2") {
		t.Errorf("other version: %v", err)
	}
	// The good state is still good.
	st = openTestState(t, good, StateOptions{})
	if id, err := st.LastBatch(); id != "1" || err != nil {
		t.Errorf("good state: last batch %q, %v", id, err)
	}
}

func TestAdmitter(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s")
	st := openTestState(t, path, StateOptions{SiteQuota: 8, MinQuota: 4})
	// Host a.example: news pages (fetched 2) and print pages (5 tries, all
	// refused by robots.txt).
	var recs []*record.Record
	var links []string
	for i := 0; i < 40; i++ {
		links = append(links, fmt.Sprintf("http://a.example/news/2024/%d/", i), fmt.Sprintf("http://a.example/print/%d.htm", i))
	}
	recs = append(recs, fetchRecord(t, "http://a.example/news/2024/100/", links, ""),
		fetchRecord(t, "http://a.example/news/2024/101/", nil, ""))
	for i := 0; i < 5; i++ {
		recs = append(recs, fetchRecord(t, fmt.Sprintf("http://a.example/print/%d.htm", i), nil, "robots: disallowed"))
	}
	if _, err := st.Apply("1", recs, nil); err != nil {
		t.Fatal(err)
	}
	segs, _, _ := st.HostSegments("a.example")
	var news, print *StateSegment
	for i := range segs {
		switch {
		case strings.Contains(segs[i].Regex, "news"):
			news = &segs[i]
		case strings.Contains(segs[i].Regex, "print"):
			print = &segs[i]
		}
	}
	if news == nil || print == nil || news.Fetched != 2 || print.Refused != 5 || print.Fetched != 5 {
		t.Fatalf("segments %+v", segs)
	}
	st.Close()
	a, done := readOnlyAdmitter(t, path, "")
	defer done()
	var got []string
	for i := 0; i < 10; i++ {
		for _, u := range []string{fmt.Sprintf("http://a.example/news/2024/%d/", 200+i), fmt.Sprintf("http://a.example/print/%d.htm", 200+i), fmt.Sprintf("http://b.example/%d", i)} {
			ad, err := a.Admit(record.New(u))
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, fmt.Sprintf("%s %s", u, ad.Verdict))
		}
	}
	admitted := map[string]int{}
	for _, g := range got {
		u, verdict, _ := strings.Cut(g, " ")
		kind := "b"
		if strings.Contains(u, "/news/") {
			kind = "news"
		} else if strings.Contains(u, "/print/") {
			kind = "print"
			if verdict != "robots" {
				t.Errorf("%s: want robots", g)
			}
		}
		if verdict == "admitted" {
			admitted[kind]++
		}
	}
	if admitted["news"] != news.Quota-2 || admitted["b"] != 10 || admitted["print"] != 0 {
		t.Errorf("admitted %v; news quota %d with 2 fetched; b.example has no segments", admitted, news.Quota)
	}
}
