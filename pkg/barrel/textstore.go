package barrel

import (
	"encoding/binary"
	"io"

	"github.com/klauspost/compress/s2"

	"github.com/sekitei/crawlkit/pkg/barrel/hit"
	"github.com/sekitei/crawlkit/pkg/barrel/htmldoc"
)

// The text file keeps each indexed page's extracted text, so that a
// snippet is cut from it without parsing the stored HTML again (a big
// page's parse costs tens of milliseconds; a snippet from the text, tens
// of microseconds). A record holds the words a snippet can show: those a
// plain hit can point at (hit.MaxPlainPos) and a window's length past
// them. Each word is stored with the text before it, spaces collapsed, as
// the snippet shows it, in chunks of textChunkWords words compressed
// apart (S2, which decodes at memory speed), so a snippet decodes one or
// two chunks, not the page.
//
// A record: total length, CRC-32C of the rest (as docinfo's), then uvarint
// the page's word count, uvarint the words stored, and per chunk uvarint
// its compressed length and the S2 block. A chunk is, per word, uvarint
// length and the text before the word, uvarint length and the word.
const textChunkWords = 256

// textStoredWords is how many of a page's words its record keeps.
const textStoredWords = hit.MaxPlainPos + SnippetWords

// maxTextRecord bounds a record read back (a damaged length is reported,
// not allocated).
const maxTextRecord = 64 << 20

// appendTextRecord appends the text record of d to b; raw is scratch.
func appendTextRecord(b []byte, d *htmldoc.Doc, raw *[]byte) []byte {
	start := len(b)
	b = append(b, 0, 0, 0, 0, 0, 0, 0, 0)
	n := min(len(d.Words), textStoredWords)
	b = binary.AppendUvarint(b, uint64(len(d.Words)))
	b = binary.AppendUvarint(b, uint64(n))
	for c := 0; c < n; c += textChunkWords {
		r := (*raw)[:0]
		for j := c; j < min(n, c+textChunkWords); j++ {
			w := &d.Words[j]
			var gap []byte
			if j > 0 {
				gap = collapseSpace(d.Text[d.Words[j-1].End:w.Start])
			}
			r = binary.AppendUvarint(r, uint64(len(gap)))
			r = append(r, gap...)
			r = binary.AppendUvarint(r, uint64(w.End-w.Start))
			r = append(r, d.Text[w.Start:w.End]...)
		}
		*raw = r
		z := s2.Encode(nil, r)
		b = binary.AppendUvarint(b, uint64(len(z)))
		b = append(b, z...)
	}
	binary.LittleEndian.PutUint32(b[start:], uint32(len(b)-start-8))
	binary.LittleEndian.PutUint32(b[start+4:], crc(b[start+8:]))
	return b
}

// pageText is a text record read back.
type pageText struct {
	words  int      // the page's words
	stored int      // words kept
	chunks [][]byte // compressed
}

// readTextAt reads the text record at off.
func readTextAt(f io.ReaderAt, off, limit int64) (*pageText, error) {
	var h [8]byte
	if off < 0 || off+8 > limit {
		return nil, corrupt("%s: offset %d out of range", textName, off)
	}
	if _, err := f.ReadAt(h[:], off); err != nil {
		return nil, corrupt("%s at %d: %v", textName, off, err)
	}
	n := int64(binary.LittleEndian.Uint32(h[:]))
	if n > maxTextRecord || off+8+n > limit {
		return nil, corrupt("%s at %d runs past the end", textName, off)
	}
	body := make([]byte, n)
	if _, err := f.ReadAt(body, off+8); err != nil {
		return nil, corrupt("%s at %d: %v", textName, off, err)
	}
	if crc(body) != binary.LittleEndian.Uint32(h[4:]) {
		return nil, corrupt("%s at %d: checksum mismatch", textName, off)
	}
	bad := func() (*pageText, error) { return nil, corrupt("%s at %d: bad record", textName, off) }
	words, k := binary.Uvarint(body)
	if k <= 0 {
		return bad()
	}
	body = body[k:]
	stored, k := binary.Uvarint(body)
	if k <= 0 || stored > words || stored > textStoredWords {
		return bad()
	}
	body = body[k:]
	t := &pageText{words: int(words), stored: int(stored)}
	for c := 0; c < t.stored; c += textChunkWords {
		zl, k := binary.Uvarint(body)
		if k <= 0 || zl > uint64(len(body)-k) {
			return bad()
		}
		t.chunks = append(t.chunks, body[k:k+int(zl)])
		body = body[k+int(zl):]
	}
	if len(body) != 0 {
		return bad()
	}
	return t, nil
}

// span returns the stored words [from, to) (to at most t.stored), each
// with the text before it.
func (t *pageText) span(from, to int) ([]snippetWord, error) {
	var out []snippetWord
	for c := from / textChunkWords; c*textChunkWords < to; c++ {
		raw, err := s2.Decode(nil, t.chunks[c])
		if err != nil {
			return nil, corrupt("%s: chunk %d: %v", textName, c, err)
		}
		for j := c * textChunkWords; j < min(to, (c+1)*textChunkWords); j++ {
			var w snippetWord
			var ok bool
			if w.gap, raw, ok = uvarintBytes(raw); ok {
				w.word, raw, ok = uvarintBytes(raw)
			}
			if !ok {
				return nil, corrupt("%s: chunk %d: bad word %d", textName, c, j)
			}
			if j >= from {
				out = append(out, w)
			}
		}
	}
	return out, nil
}

// uvarintBytes splits a uvarint-prefixed byte string off b.
func uvarintBytes(b []byte) (s, rest []byte, ok bool) {
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)-k) {
		return nil, nil, false
	}
	return b[k : k+int(n)], b[k+int(n):], true
}
