package sitegen

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func small(day int) Config {
	return Config{Seed: 3, Hosts: []string{"a.test", "b.test", "c.test"}, Port: 8080, Articles: 300, Wiki: 120, PerDay: 10, Day: day}
}

func TestDeterministicAndGrowing(t *testing.T) {
	a, b := Generate(small(0)), Generate(small(0))
	if len(a.Pages) != len(b.Pages) || a.Render(a.Pages[10]) != b.Render(b.Pages[10]) {
		t.Fatal("same config gave different sites")
	}
	later := Generate(small(5))
	if len(later.Pages) <= len(a.Pages) {
		t.Fatalf("day 5 has %d pages, day 0 %d", len(later.Pages), len(a.Pages))
	}
	// Every day-0 page still exists on day 5, and some have changed.
	changed := 0
	for _, p := range a.Pages {
		q, ok := later.byKey[p.Host+p.Path]
		if !ok {
			t.Fatalf("%s vanished", p.Path)
		}
		if q.Version > p.Version {
			changed++
		}
	}
	if changed == 0 || changed == len(a.Pages) {
		t.Fatalf("%d of %d pages changed in 5 days", changed, len(a.Pages))
	}
}

func TestLinksResolveAndRobotsHidesTraps(t *testing.T) {
	s := Generate(small(2))
	cross := 0
	for _, p := range s.Pages {
		for _, l := range p.Links {
			if strings.HasPrefix(l, "/search") {
				continue // robots.txt forbids it: no page exists
			}
			q, ok := s.page(p.Host, l)
			if !ok {
				t.Fatalf("%s links to missing %s", p.Path, l)
			}
			if q.Host != p.Host {
				cross++
			}
		}
	}
	if cross < 50 {
		t.Fatalf("only %d links between hosts", cross)
	}
	// The link graph is skewed: the most linked page has many more in-links than the median.
	in := map[string]int{}
	for _, p := range s.Pages {
		for _, l := range p.Links {
			in[l]++
		}
	}
	max := 0
	for _, n := range in {
		if n > max {
			max = n
		}
	}
	if max < 30 {
		t.Fatalf("most in-links %d: no hubs", max)
	}
}

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	s := Generate(small(0))
	if err := s.Write(dir); err != nil {
		t.Fatal(err)
	}
	for _, p := range s.Pages {
		if p.Kind == "print" {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, p.Host, FileFor(p.Path)))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(data), "<title>") {
			t.Fatalf("%s: no title", p.Path)
		}
	}
	got, _ := os.ReadFile(filepath.Join(dir, "a.test", "robots.txt"))
	if string(got) != Robots {
		t.Fatal("robots.txt differs")
	}
	seeds, _ := os.ReadFile(filepath.Join(dir, "seeds.txt"))
	hosts, _ := os.ReadFile(filepath.Join(dir, "hosts"))
	if string(seeds) != "http://a.test:8080/\n" || string(hosts) != "127.0.0.1 a.test\n127.0.0.1 b.test\n127.0.0.1 c.test\n" {
		t.Fatalf("seeds %q hosts %q", seeds, hosts)
	}
	if !reflect.DeepEqual(FileFor("/news/?page=2"), filepath.FromSlash("news/index.html?page=2")) || FileFor("/wiki/A_b") != filepath.FromSlash("wiki/A_b") {
		t.Fatal("FileFor")
	}
}
