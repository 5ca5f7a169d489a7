package focuseval

import (
	"bufio"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/sekitei/crawlkit/internal/focusweb"
)

func find(t *testing.T, rows []Row, method, order, quota string) Row {
	t.Helper()
	for _, r := range rows {
		if r.Method == method && (order == "" || r.Order == order && r.Quota == quota) {
			return r
		}
	}
	t.Fatalf("no row %q %s %s", method, order, quota)
	return Row{}
}

func TestWeb(t *testing.T) {
	w := focusweb.Generate(focusweb.DefaultConfig())
	rows, err := Web(w, Options{IndexSize: 1500, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	again, _ := Web(w, Options{IndexSize: 1500, Seed: 1})
	if !reflect.DeepEqual(rows, again) {
		t.Fatal("two runs of the same evaluation differ")
	}
	var b strings.Builder
	WriteTable(&b, rows)
	t.Log("\n" + b.String())
	sek := find(t, rows, "Sekitei: quota by segments", "", "")
	greedy := find(t, rows, "greedy index, site quota by visits", "", "")
	if sek.Index != 1500 || greedy.Index < 1450 {
		t.Errorf("index sizes %d and %d, want 1500", sek.Index, greedy.Index)
	}
	if sek.QLinks <= greedy.QLinks {
		t.Errorf("Sekitei's quota collected %d QLinks, greedy by visits %d", sek.QLinks, greedy.QLinks)
	}
	bfs := find(t, rows, "", "bfs", "none")
	for _, o := range []string{"fish", "shark", "best-first"} {
		if r := find(t, rows, "", o, "none"); r.Relevant <= bfs.Relevant {
			t.Errorf("%s found %d pages on the topic, breadth first %d", o, r.Relevant, bfs.Relevant)
		}
	}
	for _, o := range []string{"qlink-site", "qlink-links", "qlink-segment"} {
		if r := find(t, rows, "", o, "none"); r.QLinks <= bfs.QLinks {
			t.Errorf("%s collected %d QLinks, breadth first %d", o, r.QLinks, bfs.QLinks)
		}
	}
}

func readLines(t *testing.T, name string) []string {
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	s := bufio.NewScanner(f)
	for s.Scan() {
		out = append(out, s.Text())
	}
	return out
}

func TestURLs(t *testing.T) {
	d := "../../testdata/sekitei/"
	rows, err := URLs(readLines(t, d+"urls.lenta.examined"), readLines(t, d+"urls.lenta.general"), Options{IndexSize: 5000, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	WriteTable(&b, rows)
	t.Log("\n" + b.String())
	sek := find(t, rows, "Sekitei: quota by segments", "", "")
	greedy := find(t, rows, "greedy index, site quota by visits", "", "")
	if sek.QLinks <= greedy.QLinks {
		t.Errorf("Sekitei's quota collected %d QLinks, greedy %d", sek.QLinks, greedy.QLinks)
	}
	if _, err := URLs([]string{"http://a/"}, nil, Options{}); err == nil {
		t.Error("one URL accepted")
	}
}

func TestNoQLinks(t *testing.T) {
	c := focusweb.DefaultConfig()
	c.KnownShare = 0
	if _, err := Web(focusweb.Generate(c), Options{}); err == nil || !strings.Contains(err.Error(), "no QLinks") {
		t.Errorf("a web without known QLinks: %v", err)
	}
}

// The rows after the comparison and the baselines are every chosen order
// under every chosen rule, at the MIN_QUOTA given; a name the web does not
// allow is refused before any crawl.
func TestChosenRows(t *testing.T) {
	c := focusweb.DefaultConfig()
	c.Hosts, c.Articles = 3, 90
	w := focusweb.Generate(c)
	rows, err := Web(w, Options{IndexSize: 300, MinQuota: 2, Seed: 1, Orders: []string{"fish", "hits"}, Quotas: []string{"equal"}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range rows[4:] {
		got = append(got, r.Order+" "+r.Quota)
		if r.MinQuota != 2 {
			t.Errorf("%s %s: MIN_QUOTA %v, want 2", r.Order, r.Quota, r.MinQuota)
		}
	}
	if want := []string{"fish equal", "hits equal"}; len(rows) != 6 || !reflect.DeepEqual(got, want) {
		t.Errorf("%d rows, chosen %v, want the 4 of the comparison and baselines and %v", len(rows), got, want)
	}
	if _, err := Web(w, Options{Quotas: []string{"by-size"}}); err == nil || !strings.Contains(err.Error(), `quota rule "by-size"`) {
		t.Errorf("unknown rule: %v", err)
	}
	if _, err := URLs([]string{"http://a/1", "http://a/2"}, nil, Options{Orders: []string{"shark"}}); err == nil || !strings.Contains(err.Error(), `order "shark"`) {
		t.Errorf("an order needing text on a URL list: %v", err)
	}
}
