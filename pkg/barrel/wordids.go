package barrel

import "hash/maphash"

// wordIDs maps the words a build has met to their wordIDs (lexStore's
// batch). It is the applier's hottest lookup, once for every distinct word
// of every page, so it is a hand-made table, not a Go map: a Go map keeps a
// string key's bytes apart from its slot, two or three cache misses a
// lookup among a batch's hundreds of thousands of words, where a short
// word sits in its slot here: one. Longer words (few) go to a map.
type wordIDs struct {
	seed  maphash.Seed
	slots []idSlot
	used  int
	long  map[string]uint32
}

// idInline is the longest word a slot holds.
const idInline = 23

// idSlot is one word and its wordID, 32 bytes; hash 0 marks it empty.
type idSlot struct {
	hash uint32
	id   uint32
	klen uint8
	key  [idInline]byte
}

func newWordIDs() *wordIDs {
	return &wordIDs{seed: maphash.MakeSeed(), slots: make([]idSlot, 1024), long: map[string]uint32{}}
}

// get returns the wordID of w, if w is in t (never in a nil t: an index
// open for searching has no build's words).
func (t *wordIDs) get(w []byte) (uint32, bool) {
	if t == nil {
		return 0, false
	}
	if len(w) > idInline {
		id, ok := t.long[string(w)]
		return id, ok
	}
	h := uint32(maphash.Bytes(t.seed, w)) | 1
	mask := uint32(len(t.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		s := &t.slots[i]
		if s.hash == 0 {
			return 0, false
		}
		if s.hash == h && string(s.key[:s.klen]) == string(w) {
			return s.id, true
		}
	}
}

// put adds w, which must not be in t, with its wordID.
func (t *wordIDs) put(w []byte, id uint32) {
	if len(w) > idInline {
		t.long[string(w)] = id
		return
	}
	if t.used >= len(t.slots)/4*3 {
		t.grow()
	}
	s := t.free(uint32(maphash.Bytes(t.seed, w)) | 1)
	s.id, s.klen = id, uint8(len(w))
	copy(s.key[:], w)
	t.used++
}

// free returns the empty slot for a word of hash h, and marks it taken.
func (t *wordIDs) free(h uint32) *idSlot {
	mask := uint32(len(t.slots) - 1)
	i := h & mask
	for t.slots[i].hash != 0 {
		i = (i + 1) & mask
	}
	t.slots[i].hash = h
	return &t.slots[i]
}

// grow doubles the table.
func (t *wordIDs) grow() {
	old := t.slots
	t.slots = make([]idSlot, 2*len(old))
	for k := range old {
		if old[k].hash != 0 {
			*t.free(old[k].hash) = old[k]
		}
	}
}
