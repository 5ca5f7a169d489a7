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

// hostWords reads a host a word at a time: its words are those of the
// host's bytes copied into zeroed memory, for every length up to the
// slot's 24 bytes, whatever the bytes (a zero byte, 0xff) and whatever
// follows the host in memory.
func TestHostWords(t *testing.T) {
	line := "\xff\x00h2201.example-and-some-more-bytes/p/0\xff\xff\xff\xff\xff\xff\xff\xff"
	for from := 0; from < 3; from++ {
		for n := 0; n <= hostKeyMax; n++ {
			host := line[from : from+n]
			var b [hostKeyMax]byte
			copy(b[:], host)
			var want [3]uint64
			for i := range want {
				for k := 7; k >= 0; k-- {
					want[i] = want[i]<<8 | uint64(b[8*i+k])
				}
			}
			if got := hostWords(host); got != want {
				t.Errorf("hostWords(%q) = %x, want %x", host, got, want)
			}
		}
	}
}

// A host prefetched, touched or found before is found from the memo the
// table keeps (hint, last), and the memo never gives a wrong index: not
// for another host of the same length, not after the table grew.
func TestHostTableMemo(t *testing.T) {
	ps := &Pages{}
	for i := 0; i < 3000; i++ {
		h := fmt.Sprintf("h%d.example", i)
		ps.hosts.prefetch(h)
		ps.touch(h)
		if got := ps.HostIndex(h); got != int32(i) {
			t.Fatalf("HostIndex(%q) = %d, want %d", h, got, i)
		}
		// The memo of one host, another asked for.
		other := fmt.Sprintf("h%d.example", (i*7)%(i+1))
		if got := ps.HostIndex(other); ps.HostNames[got] != other {
			t.Fatalf("HostIndex(%q) gave %q's index", other, ps.HostNames[got])
		}
		ps.hosts.prefetch(fmt.Sprintf("x%d.example", i)) // a hint for a host not added
		if got, ok := ps.LookupHost(fmt.Sprintf("y%d.example", i)); ok {
			t.Fatalf("LookupHost of a host never added gave %d", got)
		}
	}
	if len(ps.HostNames) != 3000 || len(ps.hosts.slots) < 4096 {
		t.Fatalf("%d hosts in %d slots: the table did not grow as the test needs", len(ps.HostNames), len(ps.hosts.slots))
	}
}
