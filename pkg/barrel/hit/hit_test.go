package hit

import (
	"testing"
)

func TestPlainRoundTrip(t *testing.T) {
	for _, c := range []struct {
		cap       bool
		font, pos int
		wantFont  int
		wantPos   int
	}{
		{false, 1, 0, 1, 0},
		{true, 6, 4095, 6, 4095},
		{true, 0, 5000, 0, 4095}, // positions past 4095 share the last value
		{false, 9, 12, 6, 12},    // font clamped below the fancy marker
		{false, -3, -1, 0, 0},
	} {
		h := Plain(c.cap, c.font, c.pos)
		if h.IsFancy() || h.Capital() != c.cap || h.Font() != c.wantFont || h.Pos() != c.wantPos || h.Type() != -1 {
			t.Errorf("Plain(%v,%d,%d) = %016b: cap %v font %d pos %d", c.cap, c.font, c.pos, h, h.Capital(), h.Font(), h.Pos())
		}
	}
}

func TestFancyAndAnchor(t *testing.T) {
	h := Fancy(true, Title, 300)
	if !h.IsFancy() || h.Font() != 7 || h.Type() != Title || h.Pos() != 255 || !h.Capital() {
		t.Errorf("Fancy title: %016b type %d pos %d", h, h.Type(), h.Pos())
	}
	if got := uint16(Fancy(false, URL, 3)); got != 0x7003 { // 0 111 0000 00000011
		t.Errorf("Fancy URL bits = %#04x, want 0x7003", got)
	}
	a := AnchorHit(false, 20, 12345)
	if a.Type() != Anchor || a.Pos() != 15 || a.AnchorDoc() != DocHash(12345) || a.Capital() {
		t.Errorf("anchor: type %d pos %d doc %d", a.Type(), a.Pos(), a.AnchorDoc())
	}
	if a.Class() == AnchorHit(false, 0, 12346).Class() && DocHash(12345) != DocHash(12346) {
		t.Error("anchors of different pages share a class")
	}
	if Plain(false, 1, 0).Class() == h.Class() {
		t.Error("plain and title hits share a class")
	}
}

func TestForwardAndInvertedHeaders(t *testing.T) {
	for _, n := range []int{1, 254, 255, 256, MaxHits} {
		b := AppendForward(nil, 0xABCDE, n)
		rel, got, size, err := ReadForward(b)
		if err != nil || rel != 0xABCDE || got != n || size != len(b) {
			t.Errorf("forward n=%d: rel %x n %d size %d err %v", n, rel, got, size, err)
		}
		if n < 255 && len(b) != 4 || n >= 255 && len(b) != 6 {
			t.Errorf("forward n=%d: %d bytes", n, len(b))
		}
		b = AppendInverted(nil, MaxInvDocID, n)
		doc, got, size, err := ReadInverted(b)
		if err != nil || doc != MaxInvDocID || got != n || size != len(b) {
			t.Errorf("inverted n=%d: doc %d n %d size %d err %v", n, doc, got, size, err)
		}
		if n < 31 && len(b) != 4 || n >= 31 && len(b) != 6 {
			t.Errorf("inverted n=%d: %d bytes", n, len(b))
		}
	}
	if _, _, _, err := ReadInverted([]byte{0, 0, 0, 0}); err == nil {
		t.Error("a posting without hits was accepted")
	}
	if _, _, _, err := ReadForward([]byte{0, 0, 1, 255, 0}); err == nil {
		t.Error("a truncated escape was accepted")
	}
}

// FuzzHeaders feeds arbitrary bytes to the decoders: they must never panic,
// never report more bytes than given, and re-encode to what they read.
func FuzzHeaders(f *testing.F) {
	f.Add([]byte{0, 0, 1, 3})
	f.Add(AppendForward(nil, 7, 300))
	f.Add(AppendInverted(nil, 99, 40))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		if rel, n, size, err := ReadForward(b); err == nil {
			if size > len(b) {
				t.Fatalf("forward size %d > %d", size, len(b))
			}
			if rel != EndOfDoc {
				if again := AppendForward(nil, rel, n); string(again) != string(b[:size]) {
					t.Fatalf("forward re-encode %x != %x", again, b[:size])
				}
			}
		}
		if doc, n, size, err := ReadInverted(b); err == nil {
			if size > len(b) || n == 0 {
				t.Fatalf("inverted size %d n %d", size, n)
			}
			if again := AppendInverted(nil, doc, n); string(again) != string(b[:size]) {
				t.Fatalf("inverted re-encode %x != %x", again, b[:size])
			}
		}
		if len(b) >= 2 {
			h := At(b, 0)
			if h.IsFancy() != (h.Font() == 7) || h.Pos() < 0 || h.Pos() > MaxPlainPos {
				t.Fatalf("hit %016b decodes inconsistently", h)
			}
		}
	})
}

// An emphasis hit is fancy type 5 with the word's position modulo 128 and
// the definition-markup bit above it, in a class of its own.
func TestEmphHit(t *testing.T) {
	h := Fancy(true, Emph, 300&(EmphDfn-1)|EmphDfn)
	if got := uint16(h); got != 0xf5ac { // 1 111 0101 1 0101100
		t.Errorf("Emph bits = %#04x, want 0xf5ac", got)
	}
	if h.Type() != Emph || h.Pos()&(EmphDfn-1) != 300%128 || h.Pos()&EmphDfn == 0 || !h.Capital() {
		t.Errorf("emphasis hit: type %d pos %d", h.Type(), h.Pos())
	}
	if h.Class() == Fancy(true, Def, 44).Class() || h.Class() == Plain(true, 1, 44).Class() {
		t.Error("emphasis hits share a class with definitions or the text")
	}
}
