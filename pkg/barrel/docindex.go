package barrel

import (
	"encoding/binary"
	"math"
	"slices"

	"github.com/sekitei/crawlkit/pkg/barrel/lexicon"
)

// Document status in the document index.
const (
	StatusNone    = 0
	StatusFetched = 1 // in the repository
	StatusLinked  = 2 // only seen as a link target
)

// NoOffset marks a document with no repository record.
const NoOffset = math.MaxUint64

// DocEntry is one fixed-width (32-byte) entry of the document index,
// ordered by docID: status, title length in words, checksum of the page,
// repository offset, offset of its URL and title in docinfo, importance
// (PageRank or opic's), and body length in words.
type DocEntry struct {
	Status     uint8
	TitleWords uint16
	Checksum   uint32
	RepoOff    uint64
	InfoOff    uint64
	Rank       float32
	Words      uint32
}

const docEntrySize = 32
const docIndexMagic = "BDIX1\n\x00\x00"

func appendDocEntry(b []byte, e *DocEntry) []byte {
	b = append(b, e.Status, 0)
	b = binary.LittleEndian.AppendUint16(b, e.TitleWords)
	b = binary.LittleEndian.AppendUint32(b, e.Checksum)
	b = binary.LittleEndian.AppendUint64(b, e.RepoOff)
	b = binary.LittleEndian.AppendUint64(b, e.InfoOff)
	b = binary.LittleEndian.AppendUint32(b, math.Float32bits(e.Rank))
	return binary.LittleEndian.AppendUint32(b, e.Words)
}

func decodeDocEntry(b []byte) DocEntry {
	return DocEntry{
		Status:     b[0],
		TitleWords: binary.LittleEndian.Uint16(b[2:]),
		Checksum:   binary.LittleEndian.Uint32(b[4:]),
		RepoOff:    binary.LittleEndian.Uint64(b[8:]),
		InfoOff:    binary.LittleEndian.Uint64(b[16:]),
		Rank:       math.Float32frombits(binary.LittleEndian.Uint32(b[24:])),
		Words:      binary.LittleEndian.Uint32(b[28:]),
	}
}

func encodeDocIndex(docs []DocEntry) []byte {
	b := make([]byte, 0, len(docIndexMagic)+docEntrySize*len(docs))
	b = append(b, docIndexMagic...)
	for i := range docs {
		b = appendDocEntry(b, &docs[i])
	}
	return b
}

func decodeDocIndex(b []byte, repoLen, infoLen int64) ([]DocEntry, error) {
	if len(b) < len(docIndexMagic) || string(b[:len(docIndexMagic)]) != docIndexMagic ||
		(len(b)-len(docIndexMagic))%docEntrySize != 0 {
		return nil, corrupt("docindex: bad header or size")
	}
	b = b[len(docIndexMagic):]
	docs := make([]DocEntry, len(b)/docEntrySize)
	for i := range docs {
		e := decodeDocEntry(b[i*docEntrySize:])
		if e.Status > StatusLinked || (e.Status == StatusFetched && int64(e.RepoOff) >= repoLen) ||
			(e.Status != StatusNone && int64(e.InfoOff) >= infoLen) || math.IsNaN(float64(e.Rank)) {
			return nil, corrupt("docindex: entry %d out of range", i)
		}
		docs[i] = e
	}
	return docs, nil
}

// urlEntry is one entry of the URL file: the URL's 64-bit checksum and its
// docID, sorted by checksum. Collisions are resolved by the docinfo URL.
type urlEntry struct {
	Sum uint64
	Doc uint32
}

const urlEntrySize = 12
const urlMapMagic = "BURL1\n\x00\x00"

func urlSum(u string) uint64 { return lexicon.Hash([]byte(u)) }

func cmpURLEntry(a, b urlEntry) int {
	switch {
	case a.Sum < b.Sum:
		return -1
	case a.Sum > b.Sum:
		return 1
	case a.Doc < b.Doc:
		return -1
	case a.Doc > b.Doc:
		return 1
	}
	return 0
}

// mergeURLs merges a batch of new entries into the sorted URL file in one
// pass, as the paper's URL resolver does instead of a seek per link.
func mergeURLs(old, batch []urlEntry) []urlEntry {
	slices.SortFunc(batch, cmpURLEntry)
	out := make([]urlEntry, 0, len(old)+len(batch))
	i, j := 0, 0
	for i < len(old) && j < len(batch) {
		if cmpURLEntry(old[i], batch[j]) <= 0 {
			out = append(out, old[i])
			i++
		} else {
			out = append(out, batch[j])
			j++
		}
	}
	out = append(out, old[i:]...)
	return append(out, batch[j:]...)
}

// urlCandidates returns the docIDs whose URL has checksum sum.
func urlCandidates(m []urlEntry, sum uint64) []urlEntry {
	i, _ := slices.BinarySearchFunc(m, sum, func(e urlEntry, s uint64) int {
		switch {
		case e.Sum < s:
			return -1
		case e.Sum > s:
			return 1
		}
		return 0
	})
	j := i
	for j < len(m) && m[j].Sum == sum {
		j++
	}
	return m[i:j]
}

func encodeURLMap(m []urlEntry) []byte {
	b := make([]byte, 0, len(urlMapMagic)+urlEntrySize*len(m))
	b = append(b, urlMapMagic...)
	for _, e := range m {
		b = binary.LittleEndian.AppendUint64(b, e.Sum)
		b = binary.LittleEndian.AppendUint32(b, e.Doc)
	}
	return b
}

func decodeURLMap(b []byte, docs int) ([]urlEntry, error) {
	if len(b) < len(urlMapMagic) || string(b[:len(urlMapMagic)]) != urlMapMagic ||
		(len(b)-len(urlMapMagic))%urlEntrySize != 0 {
		return nil, corrupt("urls: bad header or size")
	}
	b = b[len(urlMapMagic):]
	m := make([]urlEntry, len(b)/urlEntrySize)
	for i := range m {
		m[i] = urlEntry{binary.LittleEndian.Uint64(b[i*12:]), binary.LittleEndian.Uint32(b[i*12+8:])}
		if int(m[i].Doc) >= docs || (i > 0 && cmpURLEntry(m[i-1], m[i]) >= 0) {
			return nil, corrupt("urls: entry %d out of order or range", i)
		}
	}
	return m, nil
}
