package barrel

import (
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"syscall"

	"github.com/sekitei/crawlkit/pkg/barrel/lexicon"
)

// The lexicon (section 4.2.4) is kept as the URL map is: the words file is
// append-only (per word: length (2), CRC-32C (4), the word), and runs of
// (64-bit word hash, wordID<<34 | offset of the word) records map words to
// wordIDs; a batch appends its new words and writes them as one run, and
// runs merge by the segments' policy. A lookup is a binary search per run
// and one read of the word to confirm it, so neither a build nor a search
// loads the whole lexicon. Per barrel word counts (the next wordIDs) are in
// the manifest. The live document frequencies (docFreqs) are runs too:
// (wordID, change) records, summed when runs merge and when read.
const (
	wordsName = "words"
	lexKind   = "lexicon"
	dfKind    = "df"
	wordHdr   = 2 + 4
)

type lexStore struct {
	runs   *runSet
	words  []byte // the committed words file, mapped
	counts [lexicon.Barrels]uint32

	// a build's words: those met in the batch, and the file it appends
	batch *wordIDs
	added [][2]uint64
	log   *appendFile
}

func openLexStore(dir string, m *Manifest) (*lexStore, error) {
	l := &lexStore{counts: m.LexCounts}
	var err error
	if l.runs, err = openRuns(dir, lexKind, m.LexRuns, m); err != nil {
		return nil, err
	}
	if m.Words > 0 {
		if l.words, err = mapPrefix(filepath.Join(dir, wordsName), m.Words); err != nil {
			l.close()
			return nil, err
		}
	}
	total := 0
	for _, r := range m.LexRuns {
		total += r.Count
	}
	if total != l.Len() {
		l.close()
		return nil, corrupt("lexicon runs hold %d words, the manifest counts %d", total, l.Len())
	}
	return l, nil
}

// mapPrefix maps the first n bytes of a file that may be longer.
func mapPrefix(path string, n int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, corrupt("%s: %v", filepath.Base(path), err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.Size() < n {
		return nil, corrupt("%s: shorter than the %d bytes committed (truncated)", filepath.Base(path), n)
	}
	return syscall.Mmap(int(f.Fd()), 0, int(n), syscall.PROT_READ, syscall.MAP_SHARED)
}

func (l *lexStore) close() {
	if l == nil {
		return
	}
	l.runs.close()
	if len(l.words) > 0 {
		syscall.Munmap(l.words)
		l.words = nil
	}
}

// Count returns the number of words in barrel b.
func (l *lexStore) Count(b int) int { return int(l.counts[b]) }

// Len returns the number of words.
func (l *lexStore) Len() int {
	n := 0
	for _, c := range l.counts {
		n += int(c)
	}
	return n
}

// wordAt reads the committed word at off.
func (l *lexStore) wordAt(off uint64) ([]byte, error) {
	if off+wordHdr > uint64(len(l.words)) {
		return nil, corrupt("%s: offset %d out of range", wordsName, off)
	}
	h := l.words[off:]
	n := uint64(binary.LittleEndian.Uint16(h))
	if off+wordHdr+n > uint64(len(l.words)) {
		return nil, corrupt("%s: word at %d runs past the end", wordsName, off)
	}
	w := h[wordHdr : wordHdr+n]
	if crc(w) != binary.LittleEndian.Uint32(h[2:]) {
		return nil, corrupt("%s: word at %d: checksum mismatch", wordsName, off)
	}
	return w, nil
}

// lookup finds a committed word.
func (l *lexStore) lookup(w []byte) (uint32, bool, error) {
	h := lexicon.Hash(w)
	hi := h + 1
	if hi == 0 {
		hi = math.MaxUint64
	}
	var id uint32
	found := false
	err := l.runs.each(h, hi, func(k, v uint64) error {
		if found || k != h {
			return nil
		}
		got, err := l.wordAt(v & (1<<34 - 1))
		if err != nil {
			return err
		}
		if string(got) == string(w) {
			id, found = uint32(v>>34), true
			if lexicon.BarrelOf(id) >= lexicon.Barrels || lexicon.Rel(id) >= l.counts[lexicon.BarrelOf(id)] {
				return corrupt("lexicon: wordID %d out of range", id)
			}
		}
		return nil
	})
	return id, found, err
}

// Lookup returns the wordID of w.
func (l *lexStore) Lookup(w []byte) (uint32, bool, error) {
	if id, ok := l.batch.get(w); ok {
		return id, true, nil
	}
	return l.lookup(w)
}

// Add returns the wordID of w, adding it if new (a build only).
func (l *lexStore) Add(w []byte) (uint32, bool, error) {
	if id, ok := l.batch.get(w); ok {
		return id, false, nil
	}
	id, ok, err := l.lookup(w)
	if err != nil {
		return 0, false, err
	}
	if ok {
		l.batch.put(w, id)
		return id, false, nil
	}
	if len(w) > math.MaxUint16 {
		w = w[:math.MaxUint16]
	}
	h := lexicon.Hash(w)
	b := int(h % lexicon.Barrels)
	if l.counts[b] >= lexicon.MaxPerBarrel {
		return 0, false, lexicon.ErrFull
	}
	id = lexicon.ID(b, l.counts[b])
	off := uint64(l.log.off)
	if off >= 1<<34 {
		return 0, false, lexicon.ErrFull
	}
	var hdr [wordHdr]byte
	binary.LittleEndian.PutUint16(hdr[:], uint16(len(w)))
	binary.LittleEndian.PutUint32(hdr[2:], crc(w))
	l.log.Write(hdr[:])
	if _, err := l.log.Write(w); err != nil {
		return 0, false, err
	}
	l.counts[b]++
	l.batch.put(w, id)
	l.added = append(l.added, [2]uint64{h, uint64(id)<<34 | off})
	return id, true, nil
}

// dfOf returns the live document frequency of word id: the sum of its
// changes over the runs.
func dfOf(rs *runSet, id uint32) (int64, error) {
	var n int64
	err := rs.each(uint64(id), uint64(id)+1, func(_, v uint64) error {
		n += int64(v)
		return nil
	})
	if err == nil && n < 0 {
		err = corrupt("df: word %d in %d documents", id, n)
	}
	return n, err
}
