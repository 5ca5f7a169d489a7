package opic

import (
	"testing"
)

// FuzzParseLine: any line gives an item or an error, never a panic, and an
// item always names its page.
func FuzzParseLine(f *testing.F) {
	for _, s := range []string{
		"a\tb", "http://x/", `{"url":"http://x/","links":["http://y/"],"fetched_at":"2026-11-01T00:00:00Z"}`,
		`{"url":"http://x/","final_url":"http://x/y"}`, "a\tb\tc", "\t", `{"url":`, "\xef\xbb\xbf{}", `{"url":"x","links":[null]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		it, err := ParseLine(line)
		if err != nil {
			return
		}
		if it.URL == "" {
			t.Fatalf("%q: item without a page", line)
		}
		s := New(0.85)
		applyBatch(s, it)
		s.AddItem(it)
	})
}

// FuzzStateDecode: any bytes decode to a state or give an error, never a
// panic; a decoded state encodes back to the same bytes.
func FuzzStateDecode(f *testing.F) {
	s := New(0.85)
	applyBatch(s, Item{Kind: RecordItem, URL: "http://a/", Links: []string{"http://b/", "http://c/"}, HasLinks: true, FetchedAt: fetchedAt("2026-11-01T00:00:00Z")})
	good, _ := s.MarshalBinary()
	f.Add(good)
	f.Add(good[:len(good)/2])
	f.Add([]byte(stateMagic))
	f.Add([]byte("not a state"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var u State
		if err := u.UnmarshalBinary(data); err != nil {
			return
		}
		again, _ := u.MarshalBinary()
		if string(again) != string(data) {
			t.Fatalf("re-encoding differs")
		}
	})
}

// FuzzStatePayload goes past the checksum: any payload decodes or gives an
// error, and a decoded state is usable.
func FuzzStatePayload(f *testing.F) {
	s := New(0.85)
	applyBatch(s, Item{Kind: RecordItem, URL: "http://a/", Links: []string{"http://b/", "http://c/"}, HasLinks: true, FetchedAt: fetchedAt("2026-11-01T00:00:00Z")})
	good, _ := s.MarshalBinary()
	f.Add(good[headerLen : len(good)-4])
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, payload []byte) {
		var u State
		if err := u.decodePayload(payload, stateVersion); err != nil {
			return
		}
		for id := range uint32(u.Len()) {
			for _, l := range u.Links(id) {
				if int(l) >= u.Len() {
					t.Fatalf("link %d of %d pages", l, u.Len())
				}
			}
		}
		if u.Len() > 0 {
			u.Visit(0, 1)
			u.Run(Greedy, Stop{Steps: 10}, 0)
		}
		if b, err := u.Begin(); err == nil {
			b.Add(Item{Kind: RecordItem, URL: u.Name(0), FetchedAt: fetchedAt("2026-11-01T00:00:00Z")})
			b.End()
		}
	})
}
