package barrel

import (
	"encoding/binary"
	"math"

	"github.com/sekitei/crawlkit/pkg/barrel/lexicon"
)

// Document status in the document index.
const (
	StatusNone    = 0
	StatusFetched = 1 // in the repository
	StatusLinked  = 2 // only seen as a link target
)

// Flags of a document entry: the directives of a stored page that reach
// past indexing (Google's noarchive and nosnippet).
const (
	FlagNoArchive = 1 << 0 // its stored copy is not to be shown (barrel get refuses it)
	FlagNoSnippet = 1 << 1 // no snippet in search results
)

// NoOffset marks a document with no repository record.
const NoOffset = math.MaxUint64

// DocEntry is one entry of the document index: status, title length in
// words, checksum of the page, repository offset, offset of its URL and
// title in docinfo, importance (PageRank or opic's), and body length in
// words. Entries live in the segments' document tables, ranks in the
// ranks table.
type DocEntry struct {
	Status     uint8
	Flags      uint8 // FlagNoArchive, FlagNoSnippet
	TitleWords uint16
	Checksum   uint32
	RepoOff    uint64
	InfoOff    uint64
	Rank       float32
	Words      uint32
	// Anchors is the number of anchor records to the document (live or
	// dead) when its postings were built, whose text they hold: the first
	// ones in anchors-file order. 0 in indexes before format 6.
	Anchors uint32
}

// A document table record: docID (8, the table key), status, flags,
// title words (2), checksum (4), repository offset (8), docinfo offset
// (8), words (4), anchors (4; 0 before format 6).
const docRecSize = 40

func appendDocRec(b []byte, d uint32, e *DocEntry) []byte {
	b = binary.LittleEndian.AppendUint64(b, uint64(d))
	b = append(b, e.Status, e.Flags)
	b = binary.LittleEndian.AppendUint16(b, e.TitleWords)
	b = binary.LittleEndian.AppendUint32(b, e.Checksum)
	b = binary.LittleEndian.AppendUint64(b, e.RepoOff)
	b = binary.LittleEndian.AppendUint64(b, e.InfoOff)
	b = binary.LittleEndian.AppendUint32(b, e.Words)
	return binary.LittleEndian.AppendUint32(b, e.Anchors)
}

func decodeDocRec(b []byte) (DocEntry, error) {
	e := DocEntry{
		Status:     b[8],
		Flags:      b[9],
		TitleWords: binary.LittleEndian.Uint16(b[10:]),
		Checksum:   binary.LittleEndian.Uint32(b[12:]),
		RepoOff:    binary.LittleEndian.Uint64(b[16:]),
		InfoOff:    binary.LittleEndian.Uint64(b[24:]),
		Words:      binary.LittleEndian.Uint32(b[32:]),
		Anchors:    binary.LittleEndian.Uint32(b[36:]),
	}
	if e.Status > StatusLinked || e.Status == StatusNone || binary.LittleEndian.Uint64(b) > math.MaxUint32 {
		return e, corrupt("document table: bad entry")
	}
	return e, nil
}

func urlSum(u string) uint64 { return lexicon.Hash([]byte(u)) }

// The URL-to-docID map is runs (see runSet) of (URL checksum, docID)
// records: a batch writes the URLs it gave docIDs to, sorted, as one run,
// and runs are merged in one pass as the paper's URL resolver merges its
// sorted checksums. Colliding checksums are told apart by the docinfo URL.
const urlKind = "urls"

// Anchors by target: runs of (target<<32 | source, anchors-file offset), so
// that a batch reads the anchors of the documents it re-indexes, not the
// whole anchors file.
const anchorKind = "anchors"
