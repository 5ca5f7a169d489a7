package opic

import (
	"bytes"
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
		if b, err := u.Begin(); err == nil && u.Len() > 0 {
			b.Add(Item{Kind: RecordItem, URL: u.Name(0), FetchedAt: fetchedAt("2026-11-01T00:00:00Z")})
			b.End()
		}
	})
}

// FuzzInboxLine: any outbox line is a transfer, a summary or an error,
// never a panic; what it reads writes back to a line that reads the same.
func FuzzInboxLine(f *testing.F) {
	for _, s := range []string{
		`{"opic_shard":"1/4","opic_batch":3,"opic_teleport":0.0123,"opic_pages":17}`,
		`{"url":"http://a.test/","opic_cash":2.220446049250313e-16}`,
		`{"url":"http://a.test/","opic_cash":"0.5"}`, `{"opic_shard":"4/4"}`, `{"url":""}`, `[1]`, `{`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		var in Inbox
		if err := in.Add(line); err != nil {
			return
		}
		box := &Outbox{Summary: Summary{Shard: 0, Shards: 2, Batch: 1}}
		if len(in.Summaries) == 1 {
			box.Summary = in.Summaries[0]
		} else {
			box.Transfers = in.Transfers
		}
		var again Inbox
		for _, l := range bytes.SplitAfter(box.AppendLines(nil), []byte("\n")) {
			if len(l) > 0 {
				if err := again.Add(l); err != nil {
					t.Fatalf("%q: written back as %q: %v", line, l, err)
				}
			}
		}
		if len(in.Summaries) == 1 && again.Summaries[0] != in.Summaries[0] ||
			len(in.Transfers) == 1 && (len(again.Transfers) != 1 || again.Transfers[0] != in.Transfers[0]) {
			t.Fatalf("%q: read back as %+v", line, again)
		}
	})
}
