package analysis

import "hash/maphash"

// wordCache maps a word's bytes to its analysis. It is a hand-made table,
// not a Go map, because it is the indexer's hottest lookup: a Go map keeps
// a string key's bytes apart from its slot, so a lookup among 100,000
// words costs two or three cache misses (slot, key bytes, term bytes).
// Here a short word and its term sit inline in one 64-byte slot: one miss.
// Longer words (few) go to a map.
type wordCache struct {
	seed  maphash.Seed
	slots []slot
	used  int
	long  map[string]entry
}

// inlineMax is the longest word, and term, a slot holds.
const inlineMax = 28

// slot is one cached word; hash 0 marks it empty.
type slot struct {
	hash       uint32
	klen, tlen uint8
	stop       bool
	_          uint8
	key        [inlineMax]byte
	term       [inlineMax]byte
}

// cacheSlots is the table's largest size (8 MiB); it grows to it, and is
// cleared there, when three quarters full.
const cacheSlots = 1 << 17

func newWordCache() *wordCache {
	return &wordCache{seed: maphash.MakeSeed(), long: map[string]entry{}}
}

// lookup returns word's cached analysis, or analyses it with fn and caches
// the result. The term returned is valid until the next call.
func (c *wordCache) lookup(word []byte, fn func([]byte) entry) (term []byte, stop bool) {
	if len(word) > inlineMax {
		en, ok := c.long[string(word)]
		if !ok {
			en = fn(word)
			c.remember(word, en)
		}
		return []byte(en.term), en.stop
	}
	if c.slots == nil {
		c.slots = make([]slot, 64) // 4 KiB, grown as needed: a query needs few, and one command analyses one
	}
	h := uint32(maphash.Bytes(c.seed, word)) | 1
	mask := uint32(len(c.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		s := &c.slots[i]
		if s.hash == 0 {
			break
		}
		if s.hash == h && string(s.key[:s.klen]) == string(word) {
			return s.term[:s.tlen], s.stop
		}
	}
	if en, ok := c.long[string(word)]; ok { // a short word with a long term
		return []byte(en.term), en.stop
	}
	en := fn(word)
	if len(en.term) > inlineMax {
		c.remember(word, en)
		return []byte(en.term), en.stop
	}
	if c.used >= len(c.slots)/4*3 {
		c.grow()
	}
	return c.insert(h, word, en)
}

// remember caches a word the slots cannot hold.
func (c *wordCache) remember(word []byte, en entry) {
	if len(c.long) >= cacheSlots/4 {
		clear(c.long)
	}
	c.long[string(word)] = en
}

// grow doubles the table, or clears it once it is cacheSlots large: the
// words seen last are the ones worth keeping, and a clear costs less than
// keeping a recency order.
func (c *wordCache) grow() {
	old := c.slots
	c.used = 0
	if len(old) >= cacheSlots {
		clear(c.slots)
		return
	}
	c.slots = make([]slot, 2*len(old))
	for k := range old {
		if old[k].hash != 0 {
			*c.free(old[k].hash) = old[k]
			c.used++
		}
	}
}

// free returns the empty slot where a word of hash h goes.
func (c *wordCache) free(h uint32) *slot {
	mask := uint32(len(c.slots) - 1)
	i := h & mask
	for c.slots[i].hash != 0 {
		i = (i + 1) & mask
	}
	return &c.slots[i]
}

// insert puts a word known to be absent into the table.
func (c *wordCache) insert(h uint32, word []byte, en entry) ([]byte, bool) {
	s := c.free(h)
	c.used++
	s.hash, s.klen, s.tlen, s.stop = h, uint8(len(word)), uint8(len(en.term)), en.stop
	copy(s.key[:], word)
	copy(s.term[:], en.term)
	return s.term[:s.tlen], s.stop
}
