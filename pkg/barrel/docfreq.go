package barrel

import "slices"

// The live document frequency of every word (the number of live documents
// whose full lists hold it), kept exact by construction: a batch adds the
// document counts of its new segment's lists and subtracts, for each
// document it supersedes, the words that document had in its older
// segment. Those words are known without reading the old segment: a
// document still live in an older segment has the same page version and
// the same live anchors as when that segment indexed it (a change of
// either would have re-indexed it), so its old words are its old page's
// words and the words of its anchors live before the batch. Merges drop
// only deleted postings and leave the frequencies alone. A query then
// reads its number (a sum over the df runs, see lexStore) instead of
// subtracting every segment's deleted postings from its lists.
//

// wordSets collects (wordID, docID) pairs and counts, per word, the
// distinct documents holding it.
type wordSets []uint64

func (s *wordSets) add(doc uint32, keys []uint64) {
	for _, k := range keys {
		*s = append(*s, k&^0xffffffff|uint64(doc))
	}
}

// counts returns the number of distinct documents per wordID.
func (s wordSets) counts() map[uint32]uint32 {
	slices.Sort(s)
	out := map[uint32]uint32{}
	for i, k := range s {
		if i > 0 && s[i-1] == k {
			continue
		}
		out[uint32(k>>32)]++
	}
	return out
}
