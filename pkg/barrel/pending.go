package barrel

import (
	"bufio"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"os"
)

// pendingAnchors holds the anchors of a batch's pages until Commit turns
// their target URLs into docIDs. They wait in a file beside the forward
// barrels, not in memory: a batch of millions of pages has tens of
// millions of anchors (20 a page is common), and as Go strings each costs
// about 200 bytes of heap, 17 GB for a year of a 700-page-an-hour crawl
// indexed at once.
type pendingAnchors struct {
	path string
	f    *os.File
	w    *bufio.Writer
	n    int
	buf  []byte
}

// A record: from docID, repository offset of its page, URL length, text
// length (4, 8, 4 and 2 bytes, little-endian), URL, text.
const pendingHeader = 4 + 8 + 4 + 2

func (p *pendingAnchors) add(from uint32, fromOff uint64, url, text string) error {
	if p.f == nil {
		f, err := os.OpenFile(p.path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
		if err != nil {
			return err
		}
		p.f, p.w = f, bufio.NewWriterSize(f, 1<<20)
	}
	if len(text) > math.MaxUint16 {
		text = text[:math.MaxUint16]
	}
	b := binary.LittleEndian.AppendUint32(p.buf[:0], from)
	b = binary.LittleEndian.AppendUint64(b, fromOff)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(url)))
	b = binary.LittleEndian.AppendUint16(b, uint16(len(text)))
	b = append(b, url...)
	b = append(b, text...)
	p.buf = b
	p.n++
	_, err := p.w.Write(b)
	return err
}

// each calls fn for every anchor in the order added; url and text are
// valid only during the call.
func (p *pendingAnchors) each(fn func(from uint32, fromOff uint64, url, text []byte) error) error {
	if p.f == nil {
		return nil
	}
	if err := p.w.Flush(); err != nil {
		return err
	}
	r := bufio.NewReaderSize(io.NewSectionReader(p.f, 0, math.MaxInt64), 1<<20)
	var hdr [pendingHeader]byte
	var rec []byte
	for range p.n {
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			return pendingErr(err)
		}
		ul := binary.LittleEndian.Uint32(hdr[12:])
		tl := binary.LittleEndian.Uint16(hdr[16:])
		need := int(ul) + int(tl)
		if cap(rec) < need {
			rec = make([]byte, need)
		}
		rec = rec[:need]
		if _, err := io.ReadFull(r, rec); err != nil {
			return pendingErr(err)
		}
		if err := fn(binary.LittleEndian.Uint32(hdr[:]), binary.LittleEndian.Uint64(hdr[4:]), rec[:ul], rec[ul:]); err != nil {
			return err
		}
	}
	return nil
}

func pendingErr(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return errors.New("barrel: the batch's pending anchors file is shorter than written")
	}
	return err
}

// close drops the file.
func (p *pendingAnchors) close() {
	if p.f != nil {
		p.f.Close()
		os.Remove(p.path)
		p.f, p.w, p.n = nil, nil, 0
	}
}
