package lexicon

import (
	"fmt"
	"testing"
)

func TestAddLookupMarshal(t *testing.T) {
	l := New()
	ids := map[string]uint32{}
	for i := range 5000 {
		w := fmt.Sprintf("w%d", i)
		id, isNew, err := l.Add([]byte(w))
		if err != nil || !isNew {
			t.Fatalf("Add(%s): new %v err %v", w, isNew, err)
		}
		ids[w] = id
	}
	if id, isNew, _ := l.Add([]byte("w42")); isNew || id != ids["w42"] {
		t.Fatalf("re-Add gave a new id")
	}
	var perBarrel [Barrels]int
	for _, id := range ids {
		perBarrel[BarrelOf(id)]++
	}
	for b, n := range perBarrel {
		if n != l.Count(b) || n == 0 {
			t.Fatalf("barrel %d: %d words, Count %d", b, n, l.Count(b))
		}
	}
	data, _ := l.MarshalBinary()
	l2 := New()
	if err := l2.UnmarshalBinary(data); err != nil {
		t.Fatal(err)
	}
	for w, id := range ids {
		if got, ok := l2.Lookup([]byte(w)); !ok || got != id {
			t.Fatalf("Lookup(%s) = %d %v, want %d", w, got, ok, id)
		}
	}
	if _, ok := l2.Lookup([]byte("nope")); ok {
		t.Fatal("found a word never added")
	}
	// Words keep being added after a load, with fresh relative wordIDs.
	id, isNew, _ := l2.Add([]byte("fresh"))
	if !isNew || Rel(id) != uint32(l.Count(BarrelOf(id))) {
		t.Fatalf("fresh word got %x", id)
	}
	data[len(data)/2] ^= 1
	if err := New().UnmarshalBinary(data); err == nil {
		t.Fatal("a flipped bit was not detected")
	}
	if err := New().UnmarshalBinary(data[:len(data)-9]); err == nil {
		t.Fatal("a truncated lexicon was accepted")
	}
}

func FuzzUnmarshal(f *testing.F) {
	l := New()
	for _, w := range []string{"a", "bb", "ccc"} {
		l.Add([]byte(w))
	}
	good, _ := l.MarshalBinary()
	f.Add(good)
	f.Add([]byte("BLEX1\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		l := New()
		if l.UnmarshalBinary(b) == nil {
			l.Lookup([]byte("a"))
			l.Lookup([]byte("zz"))
			for i := range l.Len() {
				l.Word(i)
			}
		}
	})
}
