package focusweb

import (
	"reflect"
	"testing"
)

func TestGenerate(t *testing.T) {
	a, b := Generate(DefaultConfig()), Generate(DefaultConfig())
	if !reflect.DeepEqual(a.URLs, b.URLs) || a.QLinks() != b.QLinks() {
		t.Fatal("the same config gave two webs")
	}
	kinds := map[string][2]int{}
	for _, p := range a.Pages {
		k := kinds[p.Kind]
		k[0]++
		if p.Visits > 0 {
			k[1]++
		}
		kinds[p.Kind] = k
		for _, l := range p.Links {
			if _, ok := a.Pages[l.URL]; !ok {
				t.Fatalf("%s links %s, which is not generated", p.URL, l.URL)
			}
		}
	}
	t.Logf("%d pages, %d QLinks, %d known; by kind (pages, QLinks): %v", len(a.Pages), a.QLinks(), len(a.Visits()), kinds)
	share := float64(a.QLinks()) / float64(len(a.Pages))
	if share < 0.04 || share > 0.15 {
		t.Errorf("QLinks are %.3f of the pages, want the lecture's 5-10%%", share)
	}
	if kinds["print"][1] != 0 || kinds["search"][1] != 0 {
		t.Errorf("print or search pages visited: %v", kinds)
	}
	if kinds["article"][1]*kinds["tag"][0] <= kinds["tag"][1]*kinds["article"][0] {
		t.Errorf("articles are not visited more than tags: %v", kinds)
	}
}
