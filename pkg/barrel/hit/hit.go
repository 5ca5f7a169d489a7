// Package hit is the 2-byte hit encoding of "The Anatomy of a Large-Scale
// Hypertextual Web Search Engine" (Brin and Page, 1998), section 4.2.5, and
// the hit-list length prefixes of the forward and inverted barrels.
//
// A plain hit is, from the high bit down: 1 bit of capitalisation, 3 bits of
// relative font size (0-6) and 12 bits of word position (positions past 4095
// are all stored as 4095). Font size 7 marks a fancy hit: capitalisation, 111,
// 4 bits of type (URL, title, anchor, meta,
// and our definition and emphasis types) and 8 bits of position. An anchor
// hit splits those 8 bits into 4 bits of position in the anchor text and 4
// bits of a hash of the docID of the page the anchor sits in.
package hit

import (
	"encoding/binary"
	"errors"
)

// Hit is one occurrence of a word in a document.
type Hit uint16

// Fancy hit types (4 bits).
const (
	URL    = 0
	Title  = 1
	Anchor = 2
	Meta   = 3
	Def    = 4 // a term the page defines: a <dt>'s leading text, a heading
	// Emph is a word set off in running text (<em>, <i>, <dfn>, <strong>,
	// <b>: a term introduced in italics), as the paper's fancy hits mark
	// a font; its position is EmphDfn for a definition's markup (<dfn>,
	// Sphinx's <em class="dfn">) plus the word's plain position modulo
	// 128, so the words of one run sit at consecutive positions.
	Emph = 5
	// EmphDfn is the bit of an emphasis hit's position that marks a
	// definition's markup.
	EmphDfn = 128
)

// Limits of the fields.
const (
	MaxPlainPos  = 4095 // 12 bits; later positions are clamped to it
	MaxFancyPos  = 255  // 8 bits
	MaxAnchorPos = 15   // 4 bits
	MaxFont      = 6    // font size 7 means "fancy"
	fancyFont    = 7
)

// Plain returns a plain hit. Out-of-range fields are clamped.
func Plain(capital bool, font, pos int) Hit {
	if font < 0 {
		font = 0
	} else if font > MaxFont {
		font = MaxFont
	}
	if pos < 0 {
		pos = 0
	} else if pos > MaxPlainPos {
		pos = MaxPlainPos
	}
	return capBit(capital) | Hit(font)<<12 | Hit(pos)
}

// Fancy returns a fancy hit of type typ (not Anchor) at pos (clamped to 255).
func Fancy(capital bool, typ, pos int) Hit {
	if pos < 0 {
		pos = 0
	} else if pos > MaxFancyPos {
		pos = MaxFancyPos
	}
	return capBit(capital) | fancyFont<<12 | Hit(typ&15)<<8 | Hit(pos)
}

// AnchorHit returns an anchor hit at pos in the anchor text (clamped to 15)
// for an anchor sitting in document fromDoc.
func AnchorHit(capital bool, pos int, fromDoc uint32) Hit {
	if pos < 0 {
		pos = 0
	} else if pos > MaxAnchorPos {
		pos = MaxAnchorPos
	}
	return capBit(capital) | fancyFont<<12 | Anchor<<8 | Hit(pos)<<4 | Hit(DocHash(fromDoc))
}

// DocHash is the 4-bit hash of a docID stored in anchor hits.
func DocHash(doc uint32) uint8 {
	doc *= 0x9E3779B1
	return uint8(doc >> 28)
}

func capBit(c bool) Hit {
	if c {
		return 1 << 15
	}
	return 0
}

// Capital reports the capitalisation bit.
func (h Hit) Capital() bool { return h&(1<<15) != 0 }

// Font is the relative font size, 7 for a fancy hit.
func (h Hit) Font() int { return int(h>>12) & 7 }

// IsFancy reports whether h is a fancy hit.
func (h Hit) IsFancy() bool { return h.Font() == fancyFont }

// Type is the fancy hit type; -1 for a plain hit.
func (h Hit) Type() int {
	if !h.IsFancy() {
		return -1
	}
	return int(h>>8) & 15
}

// Pos is the position: in the document for a plain hit, in the title, URL
// or meta text for a fancy hit, in the anchor text for an anchor hit.
func (h Hit) Pos() int {
	switch {
	case !h.IsFancy():
		return int(h) & 0xfff
	case h.Type() == Anchor:
		return int(h>>4) & 15
	default:
		return int(h) & 0xff
	}
}

// AnchorDoc is the 4-bit docID hash of an anchor hit.
func (h Hit) AnchorDoc() uint8 { return uint8(h) & 15 }

// Class groups hits that positions can be compared within: 0 plain text,
// 1+type for fancy hits, and anchors apart by the hash of their page.
func (h Hit) Class() int {
	if !h.IsFancy() {
		return 0
	}
	if h.Type() == Anchor {
		return 16 + int(h.AnchorDoc())
	}
	return 1 + h.Type()
}

// MaxHits is the longest hit list a length prefix can carry.
const MaxHits = 0xffff

// Forward barrel entry: 24 bits of wordID relative to the barrel's first and
// 8 bits of hit count; count 255 escapes to two more bytes.
const (
	MaxRelWord  = 1<<24 - 2 // 1<<24-1 ends a document's entries
	EndOfDoc    = 1<<24 - 1
	fwdEscape   = 255
	invEscape   = 31
	MaxInvDocID = 1<<27 - 1
)

// ErrCorrupt reports a malformed hit list or length prefix.
var ErrCorrupt = errors.New("corrupt hit list")

// AppendForward appends a forward-barrel word entry header.
func AppendForward(b []byte, rel uint32, n int) []byte {
	if n < fwdEscape {
		return binary.BigEndian.AppendUint32(b, rel<<8|uint32(n))
	}
	b = binary.BigEndian.AppendUint32(b, rel<<8|fwdEscape)
	return binary.BigEndian.AppendUint16(b, uint16(n))
}

// ReadForward decodes a forward entry header at b, returning the relative
// wordID, the hit count and the header size.
func ReadForward(b []byte) (rel uint32, n int, size int, err error) {
	if len(b) < 4 {
		return 0, 0, 0, ErrCorrupt
	}
	v := binary.BigEndian.Uint32(b)
	rel, n = v>>8, int(v&0xff)
	if rel == EndOfDoc {
		return rel, 0, 4, nil
	}
	if n < fwdEscape {
		return rel, n, 4, nil
	}
	if len(b) < 6 {
		return 0, 0, 0, ErrCorrupt
	}
	n = int(binary.BigEndian.Uint16(b[4:]))
	if n < fwdEscape {
		return 0, 0, 0, ErrCorrupt // the escape is only used for long lists
	}
	return rel, n, 6, nil
}

// AppendInverted appends an inverted-barrel posting header: 27 bits of
// docID and 5 bits of hit count; count 31 escapes to two more bytes.
func AppendInverted(b []byte, doc uint32, n int) []byte {
	if n < invEscape {
		return binary.BigEndian.AppendUint32(b, doc<<5|uint32(n))
	}
	b = binary.BigEndian.AppendUint32(b, doc<<5|invEscape)
	return binary.BigEndian.AppendUint16(b, uint16(n))
}

// ReadInverted decodes a posting header at b.
func ReadInverted(b []byte) (doc uint32, n int, size int, err error) {
	if len(b) < 4 {
		return 0, 0, 0, ErrCorrupt
	}
	v := binary.BigEndian.Uint32(b)
	doc, n = v>>5, int(v&31)
	if n == 0 {
		return 0, 0, 0, ErrCorrupt // postings always carry hits
	}
	if n < invEscape {
		return doc, n, 4, nil
	}
	if len(b) < 6 {
		return 0, 0, 0, ErrCorrupt
	}
	n = int(binary.BigEndian.Uint16(b[4:]))
	if n < invEscape {
		return 0, 0, 0, ErrCorrupt
	}
	return doc, n, 6, nil
}

// AppendHits appends hits, 2 bytes each, big-endian.
func AppendHits(b []byte, hs []Hit) []byte {
	for _, h := range hs {
		b = binary.BigEndian.AppendUint16(b, uint16(h))
	}
	return b
}

// At returns the i-th hit of an encoded hit list.
func At(b []byte, i int) Hit { return Hit(binary.BigEndian.Uint16(b[2*i:])) }
