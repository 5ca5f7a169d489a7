package barrel

import (
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"
)

// Pending anchors come back in the order added, byte for byte, with text
// cut at 65,535 bytes as the anchors file cuts it; close drops the file.
func TestPendingAnchors(t *testing.T) {
	p := pendingAnchors{path: filepath.Join(t.TempDir(), "anchors.pending")}
	type anchor struct {
		from      uint32
		off       uint64
		url, text string
	}
	var want []anchor
	for i := range 5000 {
		a := anchor{uint32(i), uint64(i) << 33, fmt.Sprintf("http://h%d.test/p?q=%d", i%7, i), strings.Repeat("\xffé", i%5)}
		if i == 4321 {
			a.text = strings.Repeat("x", math.MaxUint16+10)
		}
		if err := p.add(a.from, a.off, a.url, a.text); err != nil {
			t.Fatal(err)
		}
		if len(a.text) > math.MaxUint16 {
			a.text = a.text[:math.MaxUint16]
		}
		want = append(want, a)
	}
	for pass := range 2 { // read twice, as resolveAnchors does
		i := 0
		if err := p.each(func(from uint32, off uint64, u, text []byte) error {
			if got := (anchor{from, off, string(u), string(text)}); got != want[i] {
				return fmt.Errorf("pass %d, anchor %d: %+v, want %+v", pass, i, got, want[i])
			}
			i++
			return nil
		}); err != nil || i != len(want) {
			t.Fatalf("%v (%d of %d anchors)", err, i, len(want))
		}
	}
	p.close()
	if err := p.each(func(uint32, uint64, []byte, []byte) error { return fmt.Errorf("an anchor after close") }); err != nil {
		t.Fatal(err)
	}
}
