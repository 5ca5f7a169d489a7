package barrel

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"

	"github.com/sekitei/crawlkit/pkg/barrel/hit"
)

// TestHitCountsMatchEachHit: the counts score reads of a posting (by
// type, four tables at a time for a long one), whether a title hit leads
// and how many definitions are capitalised are those of reading each hit
// with typeOf, for random postings of every length around the tables'
// stride, of mostly one type and of every type.
func TestHitCountsMatchEachHit(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 28))
	randHit := func(mostlyPlain bool) hit.Hit {
		capital := rng.IntN(3) == 0
		if mostlyPlain && rng.IntN(10) > 0 {
			return hit.Plain(capital, 1, rng.IntN(4096))
		}
		switch rng.IntN(4) {
		case 0:
			return hit.Plain(capital, rng.IntN(7), rng.IntN(4096))
		case 1:
			return hit.AnchorHit(capital, rng.IntN(16), rng.Uint32())
		default:
			return hit.Fancy(capital, []int{hit.URL, hit.Title, hit.Meta, hit.Def}[rng.IntN(4)], rng.IntN(12))
		}
	}
	for n := range 80 {
		for _, mostlyPlain := range []bool{true, false} {
			for range 20 {
				l := make([]byte, 0, 2*n)
				for range n {
					l = binary.BigEndian.AppendUint16(l, uint16(randHit(mostlyPlain)))
				}
				var want [numTypes]int
				var wantTypes uint32
				leads, capDefs := false, 0
				leadMax := 1 + rng.IntN(6)
				for j := range n {
					h := hit.At(l, j)
					want[typeOf(h)]++
					wantTypes |= 1 << typeOf(h)
					if typeOf(h) == TypeTitle && h.Pos() < leadMax {
						leads = true
					}
					if typeOf(h) == TypeDef && h.Capital() {
						capDefs++
					}
				}
				var got [numTypes]int
				if types := countTypes(l, &got); got != want || types != wantTypes {
					t.Fatalf("%d hits: counts %v, types %b; each hit read %v, %b", n, got, types, want, wantTypes)
				}
				if g := titleLeads(l, leadMax); g != leads {
					t.Fatalf("%d hits: titleLeads %v, each hit read %v", n, g, leads)
				}
				if g := capitalDefs(l); g != capDefs {
					t.Fatalf("%d hits: capitalDefs %d, each hit read %d", n, g, capDefs)
				}
			}
		}
	}
}
