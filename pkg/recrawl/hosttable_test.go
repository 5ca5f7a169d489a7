package recrawl

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// The host table gives every host the index of its first appearance, as
// a map does, for hosts of every length around the in-slot limit (24
// bytes), hosts equal but for their padding ("a" and "a\x00"), and enough
// hosts to grow the table several times.
func TestHostTableMatchesMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	var hosts []string
	for i := 0; i < 5000; i++ {
		n := 1 + rng.IntN(40)
		var b strings.Builder
		for b.Len() < n {
			b.WriteByte("ab.-0\x00"[rng.IntN(6)])
		}
		hosts = append(hosts, b.String())
	}
	for i := 0; i < 20000; i++ {
		hosts = append(hosts, fmt.Sprintf("h%d.example", rng.IntN(30000)))
	}
	hosts = append(hosts, "a", "a\x00", "a\x00\x00", "", strings.Repeat("x", 24), strings.Repeat("x", 25))
	ps := &Pages{}
	want := map[string]int32{}
	for round := 0; round < 2; round++ {
		for _, h := range hosts {
			if _, ok := want[h]; !ok {
				want[h] = int32(len(want))
			}
			if got := ps.HostIndex(h); got != want[h] {
				t.Fatalf("HostIndex(%q) = %d, want %d", h, got, want[h])
			}
			if got, ok := ps.LookupHost(h); !ok || got != want[h] {
				t.Fatalf("LookupHost(%q) = %d, %v, want %d", h, got, ok, want[h])
			}
		}
	}
	if len(ps.HostNames) != len(want) {
		t.Fatalf("%d host names, want %d", len(ps.HostNames), len(want))
	}
	for _, h := range []string{"b", "a\x00\x00\x00", strings.Repeat("x", 23), strings.Repeat("x", 26)} {
		if _, in := want[h]; in {
			continue
		}
		if i, ok := ps.LookupHost(h); ok {
			t.Errorf("LookupHost(%q) = %d for a host never added", h, i)
		}
	}
	if math.MaxInt32 < len(want) {
		t.Fatal("unreachable")
	}
}
