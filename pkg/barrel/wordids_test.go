package barrel

import (
	"fmt"
	"hash/maphash"
	"strings"
	"testing"
)

// wordIDs answers as a map does, through its growth, for words that sit in
// a slot and longer ones, and knows no word it was not given.
func TestWordIDs(t *testing.T) {
	want := map[string]uint32{}
	tab := newWordIDs()
	word := func(i int) string {
		return fmt.Sprintf("w%d", i) + strings.Repeat("x", i%(2*idInline)) // 2 to 50 bytes
	}
	const n = 50000
	for i := range n {
		w := word(i)
		if _, ok := tab.get([]byte(w)); ok {
			t.Fatalf("%q found before it was put", w)
		}
		tab.put([]byte(w), uint32(i)*7)
		want[w] = uint32(i) * 7
	}
	if len(tab.slots) < n/2 {
		t.Fatalf("the table has %d slots for %d words: it did not grow", len(tab.slots), n)
	}
	for w, id := range want {
		if got, ok := tab.get([]byte(w)); !ok || got != id {
			t.Fatalf("%q: %d %v, want %d", w, got, ok, id)
		}
	}
	for i := n; i < n+1000; i++ {
		if _, ok := tab.get([]byte(word(i))); ok {
			t.Fatalf("%q found, never put", word(i))
		}
	}
	if _, ok := (*wordIDs)(nil).get([]byte("a")); ok {
		t.Fatal("a nil table found a word")
	}
}

// Two words of one hash are told apart by their bytes.
func TestWordIDsSameHash(t *testing.T) {
	tab := newWordIDs()
	tab.put([]byte("alpha"), 1)
	h := uint32(maphash.Bytes(tab.seed, []byte("beta"))) | 1
	for i := range tab.slots {
		if tab.slots[i].hash != 0 { // alpha's slot, given beta's hash and place
			s := tab.slots[i]
			s.hash = h
			tab.slots[i] = idSlot{}
			*tab.free(h) = s
		}
	}
	if id, ok := tab.get([]byte("beta")); ok {
		t.Fatalf("beta found as %d: alpha's slot", id)
	}
}
