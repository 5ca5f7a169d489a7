package barrel

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var site = map[string]string{
	"http://s.test/a.html": `<html><head><title>Alpha Apples</title></head><body><h1>Apples</h1>
<p>Red apples grow on trees next to a banana.</p>
<a href="b.html">Banana bread recipe</a> <a href="c.html">cherry pie</a> <a href="never.html">zeppelin museum</a></body></html>`,
	"http://s.test/b.html": `<html><head><title>Banana Bread</title></head><body>
<p>banana bread needs ripe bananas and flour.</p><a href="a.html">alpha apples</a></body></html>`,
	"http://s.test/c.html": `<html><head><title>Cherry Pie</title></head><body><p>cherry pie with apples, baked.</p>
<a href="/a.html">apples</a></body></html>`,
}

func build(t testing.TB, dir string, opts Options, pages map[string]string) *Stats {
	t.Helper()
	b, err := NewBuilder(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	urls := make([]string, 0, len(pages))
	for u := range pages {
		urls = append(urls, u)
	}
	slices.Sort(urls)
	for _, u := range urls {
		if err := b.Add(u, []byte(pages[u])); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	return &b.Stats
}

func open(t testing.TB, dir string) *Index {
	t.Helper()
	idx, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { idx.Close() })
	return idx
}

func search(t testing.TB, idx *Index, q string) []Result {
	t.Helper()
	r, err := idx.Search(q, SearchOptions{N: 10})
	if err != nil {
		t.Fatalf("search %q: %v", q, err)
	}
	return r.Results
}

// answers summarises the results of queries by URL and score.
func answers(t testing.TB, idx *Index, queries []string) string {
	var sb strings.Builder
	for _, q := range queries {
		fmt.Fprintf(&sb, "%s:", q)
		for _, r := range search(t, idx, q) {
			fmt.Fprintf(&sb, " %s %.6f %q", r.URL, r.Score, r.Title)
		}
		sb.WriteByte('\n')
	}
	return sb.String()
}

var queries = []string{"banana bread", "apples", "cherry pie", "zeppelin", "alpha", "flour", "walnut", "bananas ripe", "red apples trees"}

func TestBuildAndSearch(t *testing.T) {
	dir := t.TempDir()
	st := build(t, dir, Options{}, site)
	if st.Added != 3 || st.Anchors != 5 {
		t.Errorf("stats %+v", st)
	}
	idx := open(t, dir)
	if idx.Docs() != 4 || idx.Manifest().Fetched != 3 {
		t.Errorf("docs %d fetched %d", idx.Docs(), idx.Manifest().Fetched)
	}
	r := search(t, idx, "Banana bread")
	if len(r) == 0 || r[0].URL != "http://s.test/b.html" || r[0].Title != "Banana Bread" {
		t.Fatalf("banana bread: %+v", r)
	}
	if !strings.Contains(r[0].Snippet, "<b>banana</b> <b>bread</b>") {
		t.Errorf("snippet %q", r[0].Snippet)
	}
	// A page never fetched is found by the anchor text pointing to it.
	r = search(t, idx, "zeppelin museum")
	i := slices.IndexFunc(r, func(x Result) bool { return x.URL == "http://s.test/never.html" })
	if len(r) != 2 || i < 0 || r[i].Title != "" || r[i].Snippet != "" || r[1-i].URL != "http://s.test/a.html" {
		t.Fatalf("zeppelin: %+v", r)
	}
	r = search(t, idx, "apples")
	if len(r) != 3 || r[0].URL != "http://s.test/a.html" {
		t.Fatalf("apples: %+v", r)
	}
	// A word no page holds is reported; the others still find their pages.
	resp, err := idx.Search("apples unknownword", SearchOptions{})
	if err != nil || len(resp.Results) != 3 || !slices.Equal(resp.Unknown, []string{"unknownword"}) {
		t.Fatalf("unknown word: %+v %v", resp, err)
	}
	if resp, err := idx.Search("qwertyuiop", SearchOptions{}); err != nil || len(resp.Results) != 0 {
		t.Fatalf("only an unknown word: %+v %v", resp, err)
	}
	resp, _ = idx.Search("ripe", SearchOptions{N: 1, Explain: true})
	if resp.Barrels != "full" || len(resp.Results) != 1 {
		t.Fatalf("ripe: %+v", resp)
	}
	ex := resp.Results[0].Explain
	if ex == nil || ex.Counts["ripe"]["plain"] != 1 || ex.IR <= 0 || ex.Rank <= 0 {
		t.Errorf("explain %+v", ex)
	}
	d, ok, err := idx.Lookup("http://s.test/c.html")
	if !ok || err != nil {
		t.Fatal("lookup c.html", err)
	}
	u, body, err := idx.Page(d)
	if err != nil || u != "http://s.test/c.html" || string(body) != site[u] {
		t.Fatalf("page: %q %v", u, err)
	}
	never, _, _ := idx.Lookup("http://s.test/never.html")
	if _, _, err := idx.Page(never); !errors.Is(err, ErrNotFetched) {
		t.Errorf("page of a linked-only doc: %v", err)
	}
	if err := idx.Verify(); err != nil {
		t.Fatal(err)
	}
}

// TestIncremental adds batches and checks the index answers exactly as one
// built from scratch over the final pages, then as a rebuild from the
// repository.
func TestIncremental(t *testing.T) {
	dir := t.TempDir()
	first := map[string]string{"http://s.test/a.html": site["http://s.test/a.html"], "http://s.test/b.html": site["http://s.test/b.html"]}
	build(t, dir, Options{}, first)
	idx := open(t, dir)
	if r := search(t, idx, "flour"); len(r) != 1 {
		t.Fatalf("flour before: %+v", r)
	}
	if r := search(t, idx, "cherry"); len(r) != 2 || r[0].URL != "http://s.test/c.html" || r[0].Title != "" {
		t.Fatalf("cherry before c is fetched: %+v", r)
	}
	idx.Close()

	final := maps(site)
	final["http://s.test/b.html"] = strings.Replace(site["http://s.test/b.html"], "flour", "walnut", 1)
	st := build(t, dir, Options{}, final)
	if st.Added != 1 || st.Reindexed != 1 || st.Unchanged != 1 {
		t.Errorf("batch 2 stats %+v", st)
	}
	// a.html, unchanged, gains the anchors of c and of b's new version: it
	// is the one target re-indexed; the anchors read are those to a (b's
	// old and new one, c's), to b (a's) and to c (a's).
	if st.Targets != 1 || st.AnchorsRead != 5 {
		t.Errorf("batch 2: %d targets re-indexed, %d anchors read; want 1 and 5", st.Targets, st.AnchorsRead)
	}
	idx = open(t, dir)
	if r := search(t, idx, "flour"); len(r) != 0 {
		t.Errorf("flour after the page changed: %+v", r)
	}
	if r := search(t, idx, "walnut"); len(r) != 1 || r[0].URL != "http://s.test/b.html" {
		t.Errorf("walnut: %+v", r)
	}
	got := answers(t, idx, queries)

	scratch := t.TempDir()
	build(t, scratch, Options{}, final)
	if want := answers(t, open(t, scratch), queries); got != want {
		t.Errorf("incremental index answers\n%s\nfrom scratch\n%s", got, want)
	}
	if err := idx.Verify(); err != nil {
		t.Fatal(err)
	}
	idx.Close()

	if _, err := Rebuild(context.Background(), dir, Options{}); err != nil {
		t.Fatal(err)
	}
	if after := answers(t, open(t, dir), queries); after != got {
		t.Errorf("rebuilt index answers\n%s\nbefore\n%s", after, got)
	}
}

func maps(m map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		out[k] = v
	}
	return out
}

// TestSmallBaskets sorts with a budget of a few bytes (a basket per word,
// every barrel sorted in its turn straight into the file) and with one
// that some forward barrels exceed (the others sorted ahead, in parallel,
// into memory), and must write the same barrels as with the default budget.
func TestSmallBaskets(t *testing.T) {
	a := t.TempDir()
	build(t, a, Options{}, site)
	ma := open(t, a).Manifest()
	for _, budget := range []int64{16, 300} {
		b := t.TempDir()
		build(t, b, Options{SortMemory: budget}, site)
		mb := open(t, b).Manifest()
		for name, sum := range ma.Files {
			if mb.Files[name] != sum {
				t.Errorf("budget %d: %s differs: %+v vs %+v", budget, name, sum, mb.Files[name])
			}
		}
	}
}

// TestInterruptedBuild drops a batch that was never committed: the index
// keeps answering as before, and the next build cuts the leftover bytes.
func TestInterruptedBuild(t *testing.T) {
	dir := t.TempDir()
	build(t, dir, Options{}, site)
	before := answers(t, open(t, dir), queries)
	b, err := NewBuilder(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewBuilder(dir, Options{}); !errors.Is(err, ErrLocked) {
		t.Errorf("second builder: %v", err)
	}
	b.Add("http://s.test/d.html", []byte("<title>walnut</title> new page"))
	b.Add("http://s.test/a.html", []byte("<title>changed</title>"))
	b.wait()
	b.repo.sync()
	b.lex.log.sync()
	b.Close() // no Commit: as if the process died
	st, _ := os.Stat(filepath.Join(dir, repoName))
	wst, _ := os.Stat(filepath.Join(dir, wordsName))
	idx := open(t, dir)
	if st.Size() <= idx.Manifest().Repository || wst.Size() <= idx.Manifest().Words {
		t.Fatalf("the uncommitted pages and words did not reach the repository and words files")
	}
	if got := answers(t, idx, queries); got != before {
		t.Errorf("after an interrupted build:\n%s\nbefore:\n%s", got, before)
	}
	idx.Close()
	build(t, dir, Options{}, map[string]string{"http://s.test/e.html": "<title>Elderberry</title>"})
	idx = open(t, dir)
	if err := idx.Verify(); err != nil {
		t.Fatal(err)
	}
	if r := search(t, idx, "walnut"); len(r) != 0 {
		t.Errorf("uncommitted page found: %+v", r)
	}
	if r := search(t, idx, "elderberry"); len(r) != 1 {
		t.Errorf("elderberry: %+v", r)
	}
}

// TestCorruption damages each file of an index in turn: opening, searching
// or reading must fail with ErrCorrupt, never answer wrongly or panic.
func TestCorruption(t *testing.T) {
	src := t.TempDir()
	build(t, src, Options{}, site)
	want := answers(t, open(t, src), queries)
	m := open(t, src).Manifest()
	names := []string{repoName, docInfoName, anchorsName, wordsName, textName}
	for name := range m.Files {
		names = append(names, diskName(name, m.Generation))
	}
	slices.Sort(names)
	for _, name := range names {
		for _, mode := range []string{"flip", "truncate"} {
			dir := t.TempDir()
			copyDir(t, src, dir)
			p := filepath.Join(dir, name)
			data, _ := os.ReadFile(p)
			if len(data) == 0 {
				continue
			}
			if mode == "flip" {
				data[len(data)/2] ^= 0x20
			} else {
				data = data[:len(data)-1]
			}
			os.WriteFile(p, data, 0o644)
			err := useIndex(dir, want)
			if err == nil {
				t.Errorf("%s %s: not detected", mode, name)
			} else if !errors.Is(err, ErrCorrupt) {
				t.Errorf("%s %s: error %v does not say the index is corrupt", mode, name, err)
			}
		}
	}
}

// useIndex opens dir, runs the queries, reads every page and verifies;
// it returns the first error, or one when the answers differ from want.
func useIndex(dir, want string) error {
	idx, err := Open(dir)
	if err != nil {
		return err
	}
	defer idx.Close()
	var sb strings.Builder
	for _, q := range queries {
		r, err := idx.Search(q, SearchOptions{N: 10})
		if err != nil {
			return err
		}
		fmt.Fprintf(&sb, "%s:", q)
		for _, x := range r.Results {
			fmt.Fprintf(&sb, " %s %.6f %q", x.URL, x.Score, x.Title)
		}
		sb.WriteByte('\n')
	}
	for d := range idx.Docs() {
		if _, _, err := idx.Page(uint32(d)); err != nil && !errors.Is(err, ErrNotFetched) {
			return err
		}
	}
	if err := idx.Verify(); err != nil {
		return err
	}
	if sb.String() != want {
		return fmt.Errorf("wrong answers:\n%s", sb.String())
	}
	return nil
}

func copyDir(t testing.TB, src, dst string) {
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if !e.Type().IsRegular() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestPageRank(t *testing.T) {
	pr, err := PageRank(3, [][2]uint32{{0, 1}, {1, 2}, {2, 0}, {2, 0}, {1, 1}}, 0.85, 100, 1e-12)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range pr {
		if math.Abs(v-1.0/3) > 1e-9 {
			t.Fatalf("cycle: %v", pr)
		}
	}
	// A star: every leaf links to the hub; the hub has no out-links, so its
	// rank is spread over all pages.
	if pr, err = PageRank(4, [][2]uint32{{1, 0}, {2, 0}, {3, 0}}, 0.85, 200, 1e-12); err != nil {
		t.Fatal(err)
	}
	sum := pr[0] + pr[1] + pr[2] + pr[3]
	if math.Abs(sum-1) > 1e-9 || pr[0] <= pr[1] || math.Abs(pr[1]-pr[2]) > 1e-12 {
		t.Fatalf("star: %v", pr)
	}
	// Closed form for the star: leaves l = (1-d)/n + d*h/n, hub h = l + 3*d*l.
	l := pr[1]
	if math.Abs(pr[0]-(l+3*0.85*l)) > 1e-9 {
		t.Errorf("star hub %v, want %v", pr[0], l+3*0.85*l)
	}
}

func TestImportance(t *testing.T) {
	dir := t.TempDir()
	build(t, dir, Options{Importance: map[string]float64{"http://s.test/c.html": 3, "http://s.test/b.html": 1, "http://nowhere.test/": 5}}, site)
	idx := open(t, dir)
	if idx.Manifest().RankSource != "importance" {
		t.Errorf("rank source %q", idx.Manifest().RankSource)
	}
	rank := func(u string) float32 {
		d, ok, _ := idx.Lookup(u)
		if !ok {
			t.Fatalf("no %s", u)
		}
		e, _ := idx.Doc(d)
		return e.Rank
	}
	if c, b, a := rank("http://s.test/c.html"), rank("http://s.test/b.html"), rank("http://s.test/a.html"); math.Abs(float64(c)-0.75) > 1e-6 ||
		math.Abs(float64(b)-0.25) > 1e-6 || a <= 0 || a >= b {
		t.Errorf("ranks c %v b %v a %v", c, b, a)
	}
}
