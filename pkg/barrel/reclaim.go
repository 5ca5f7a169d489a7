package barrel

import (
	"bufio"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
)

// Reclaim. The repository, the text, docinfo and the anchors file are
// append-only: a page fetched again writes new records, and the old ones
// stay, dead, as long as the file. A repository or text record is live
// while a live document entry points at it (its repository offset, its
// docinfo record's text reference), a docinfo record while a live entry's
// InfoOff does, an anchor record while its source page's current version
// is the one that wrote it (its fromOff is that version's repository
// offset; the version replaced, its anchors die with it and stay dead).
// Once the dead records of one of them pass reclaimFraction of its
// records, the file's live records are copied, in order and as they are,
// into a new file beside it (repository.G, text.G, docinfo.G, anchors.G),
// at most reclaimStep bytes of the old file's offsets a commit, each
// commit's records with a map table from logical offsets to their places
// in the new file (one entry per run of records adjacent in both).
// Until the copy reaches the file's end, readers and appends use the old
// file; the commit whose step reaches it makes the manifest name the new
// file and its maps, and the old file is removed after that commit. Offsets
// do not change: the document entries, the anchors (which know a page's
// version by its repository offset), the anchor runs and the docinfo
// records keep the logical offsets they hold, and a read maps an offset
// below the file's Base through the maps, one at or past it by Base and
// Head. The anchor runs keep the keys of dropped anchors (a document's
// count of anchor records, live or dead, decides when it is re-indexed
// for them): a reader finds such an offset in no run of the maps
// (logView.locate) and takes the anchor as dead, as it would have on
// reading it. Sequential readers (PageRank's links, Verify) read the file
// on disk in order, which is the live records' logical order. One copy is
// under way at a time.

// Reclaimed places an append-only file's records on disk.
type Reclaimed struct {
	// File is the file on disk: empty for the file's own name (never
	// reclaimed), else name.G.
	File string `json:"file,omitempty"`
	// Logical offsets below Base are the reclaimed records, found through
	// the map tables Maps (runName(mapKind, id); 16-byte records of
	// logical and physical offset, the tables in logical order). They fill
	// the file's first Head bytes; an offset at or past Base lies at
	// offset-Base+Head.
	Base int64 `json:"base,omitempty"`
	Head int64 `json:"head,omitempty"`
	Maps []int `json:"maps,omitempty"`
	// Records counts the records in the file, live or dead (the
	// repository's and the text's from the first commit of format 7 on,
	// docinfo's from that of format 8 on: an older index's dead records
	// are not counted until the file's first reclaim; the anchors' are
	// counted at the first commit of format 8).
	Records int64 `json:"records,omitempty"`
	// Copy is the reclaim under way, if any.
	Copy *ReclaimCopy `json:"copy,omitempty"`
}

// ReclaimCopy is a reclaim under way: the new file, its committed length
// and CRC-32C, its maps so far, the logical offset the copy has reached
// and the records copied.
type ReclaimCopy struct {
	File    string `json:"file"`
	Size    int64  `json:"size"`
	CRC     uint32 `json:"crc32c"`
	Maps    []int  `json:"maps,omitempty"`
	Done    int64  `json:"done"`
	Records int64  `json:"records"`
}

const mapKind = "spacemap"

// physical is the length on disk of a file of logical length n.
func (sp Reclaimed) physical(n int64) int64 { return n - sp.Base + sp.Head }

// copyMaps are the maps of the copy under way, if any.
func (sp Reclaimed) copyMaps() []int {
	if sp.Copy == nil {
		return nil
	}
	return sp.Copy.Maps
}

// name is the file's name on disk.
func (sp Reclaimed) name(def string) string {
	if sp.File == "" {
		return def
	}
	return sp.File
}

// reclaimFraction is the share of dead records that has a file reclaimed,
// reclaimMin the bytes below which a file is left alone, reclaimStep the
// bytes of the old file a commit copies.
var (
	reclaimFraction = 0.08
	reclaimMin      = int64(1 << 20)
	reclaimStep     = int64(64 << 20)
)

// reclaimHook, when set (by tests), is called after a reclaim's files are
// written and synced ("written") and after the manifest naming them is in
// ("committed"), before the old file is removed, with the file's kind.
var reclaimHook func(stage, kind string)

// logView reads an append-only file at logical offsets.
type logView struct {
	f          *os.File
	base, head int64
	maps       []*table // in logical order
	firsts     []uint64 // each map's first logical offset
	// data maps the file's committed bytes, where mapCommitted did: a
	// read within them is a copy, not a system call.
	data []byte
}

// mapCommitted maps the first n bytes of the file (its committed length
// on disk, physical), read-only. The file never shrinks below them while
// it exists: a build truncates only what no commit holds, and a reclaim
// copies into a new file. Where the file is shorter, or the mapping
// fails, the view reads with pread as before.
func (v *logView) mapCommitted(n int64) {
	st, err := v.f.Stat()
	if err != nil || n <= 0 || st.Size() < n || n != int64(int(n)) {
		return
	}
	if data, err := syscall.Mmap(int(v.f.Fd()), 0, int(n), syscall.PROT_READ, syscall.MAP_SHARED); err == nil {
		v.data = data
	}
}

// openMaps opens the map tables ids.
func openMaps(dir string, ids []int, m *Manifest) ([]*table, []uint64, error) {
	var ts []*table
	var firsts []uint64
	for _, id := range ids {
		name := runName(mapKind, id)
		sum, ok := m.Files[name]
		if !ok {
			closeTables(ts)
			return nil, nil, corrupt("%s missing from %s", name, manifestName)
		}
		t, err := openTable(dir, name, sum)
		if err != nil {
			closeTables(ts)
			return nil, nil, err
		}
		ts = append(ts, t)
		if t.size != 16 || t.count == 0 || len(firsts) > 0 && t.fence(0) <= firsts[len(firsts)-1] {
			closeTables(ts)
			return nil, nil, corrupt("%s: bad map", name)
		}
		firsts = append(firsts, t.fence(0))
	}
	return ts, firsts, nil
}

func closeTables(ts []*table) {
	for _, t := range ts {
		t.close()
	}
}

// openLayout is a logView of sp's maps alone, for locate (no file).
func openLayout(dir string, sp Reclaimed, m *Manifest) (*logView, error) {
	v := &logView{base: sp.Base, head: sp.Head}
	var err error
	if v.maps, v.firsts, err = openMaps(dir, sp.Maps, m); err != nil {
		return nil, err
	}
	return v, nil
}

// openLogView opens the file dir/sp.name(def).
func openLogView(dir, def string, sp Reclaimed, m *Manifest) (*logView, error) {
	v, err := openLayout(dir, sp, m)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(filepath.Join(dir, sp.name(def)))
	if err != nil {
		v.close()
		return nil, err
	}
	v.f = f
	return v, nil
}

func (v *logView) close() {
	if v == nil {
		return
	}
	if v.data != nil {
		syscall.Munmap(v.data)
		v.data = nil
	}
	if v.f != nil {
		v.f.Close()
	}
	closeTables(v.maps)
}

// mapEntry reads map entry i of table t: a logical and a physical offset.
func mapEntry(t *table, i int) (lo, ph int64, err error) {
	r, err := t.rec(i)
	if err != nil {
		return 0, 0, err
	}
	return int64(binary.LittleEndian.Uint64(r)), int64(binary.LittleEndian.Uint64(r[8:])), nil
}

// phys maps a logical offset to the file's.
func (v *logView) phys(off int64) (int64, error) {
	if off >= v.base || len(v.maps) == 0 {
		return off - v.base + v.head, nil
	}
	j := sort.Search(len(v.firsts), func(i int) bool { return v.firsts[i] > uint64(off) }) - 1
	if j < 0 {
		return 0, corrupt("%s: offset %d before the first record", v.maps[0].name, off)
	}
	t := v.maps[j]
	i, err := t.search(uint64(off) + 1) // the first record past off
	if err != nil {
		return 0, err
	}
	lo, ph, err := mapEntry(t, i-1) // i > 0: the table's first key is at most off
	return ph + off - lo, err
}

// locate maps the logical offset of a record to the file's, and reports
// whether the record is in the file: false for one a reclaim dropped (in
// no run of the maps). Each map entry starts a run of records that ends
// where the next entry's (or, for the last, the reclaimed part) does.
func (v *logView) locate(off int64) (int64, bool, error) {
	if off >= v.base {
		return off - v.base + v.head, true, nil
	}
	j := sort.Search(len(v.firsts), func(i int) bool { return v.firsts[i] > uint64(off) }) - 1
	if j < 0 {
		return 0, false, nil
	}
	t := v.maps[j]
	i, err := t.search(uint64(off) + 1)
	if err != nil {
		return 0, false, err
	}
	lo, ph, err := mapEntry(t, i-1)
	if err != nil {
		return 0, false, err
	}
	end := v.head
	switch {
	case i < t.count:
		_, end, err = mapEntry(t, i)
	case j+1 < len(v.maps):
		_, end, err = mapEntry(v.maps[j+1], 0)
	}
	return ph + off - lo, off-lo < end-ph, err
}

// ReadAt reads at a logical offset (within one record).
func (v *logView) ReadAt(b []byte, off int64) (int, error) {
	p, err := v.phys(off)
	if err != nil {
		return 0, err
	}
	if p >= 0 && p <= int64(len(v.data))-int64(len(b)) {
		return copy(b, v.data[p:]), nil
	}
	return v.f.ReadAt(b, p)
}

// spaceRef is one of a manifest's reclaimed files: its name, its layout,
// its logical length and CRC-32C.
type spaceRef struct {
	kind string
	sp   *Reclaimed
	size *int64
	crc  *uint32
}

// spaces lists the files reclaim gives space back from, in the order it
// prefers them on a tie.
func (m *Manifest) spaces() []spaceRef {
	return []spaceRef{
		{repoName, &m.RepoSpace, &m.Repository, &m.RepositoryCRC},
		{textName, &m.TextSpace, &m.Text, &m.TextCRC},
		{docInfoName, &m.InfoSpace, &m.DocInfo, &m.DocInfoCRC},
		{anchorsName, &m.AnchorSpace, &m.Anchors, &m.AnchorsCRC},
	}
}

// space returns the reclaimed file kind of m.
func (m *Manifest) space(kind string) spaceRef {
	for _, s := range m.spaces() {
		if s.kind == kind {
			return s
		}
	}
	panic("barrel: no reclaimed file " + kind)
}

// liveRecords is the number of live records of the file kind: a
// repository and a text record per fetched page, a docinfo record per
// docID, and the live anchors the manifest counts.
func (m *Manifest) liveRecords(kind string) int64 {
	switch kind {
	case repoName, textName:
		return int64(m.Fetched)
	case docInfoName:
		return int64(m.Docs)
	}
	return m.LiveAnchors
}

// file is the builder's append-only file kind.
func (b *Builder) file(kind string) *appendFile {
	switch kind {
	case repoName:
		return b.repo
	case textName:
		return b.text
	case docInfoName:
		return b.info
	}
	return b.anchorsF
}

// reclaimDue picks the file a commit reclaims a step of: the one whose
// copy is under way, else, of those past the fraction, the one reclaimed
// longest ago (never first; the larger share of dead records on a tie),
// so that a file whose share grows slowly is not passed over by those
// that pass the fraction again soon after their reclaim; else "".
func reclaimDue(m *Manifest) string {
	for _, s := range m.spaces() {
		if s.sp.Copy != nil {
			return s.kind
		}
	}
	kind, since, most := "", 0, 0.0
	for _, s := range m.spaces() {
		live := m.liveRecords(s.kind)
		if *s.size < reclaimMin || s.sp.Records <= live {
			continue
		}
		f := float64(s.sp.Records-live) / float64(s.sp.Records)
		if f < reclaimFraction {
			continue
		}
		g := s.sp.since(s.kind)
		if kind == "" || g < since || g == since && f > most {
			kind, since, most = s.kind, g, f
		}
	}
	return kind
}

// since is the generation whose commit started the copy that made the
// file, -1 for a file never reclaimed.
func (sp Reclaimed) since(kind string) int {
	g, err := strconv.Atoi(strings.TrimPrefix(sp.File, kind+"."))
	if err != nil {
		return -1
	}
	return g
}

// errStepFull stops a reclaim step's records.
var errStepFull = errors.New("step full")

// reclaim copies one step of the file kind of the manifest m being
// committed: its next live records, reclaimStep bytes of them (or twice
// what the batch appended to the file, if more), as the live document
// entries of m's segments (written, not yet synced) find them. It returns
// the files it wrote (not synced); the caller syncs them, and the copy
// file. When the step reaches the file's end, m names the new file.
func (b *Builder) reclaim(m *Manifest, kind string, newID func() int) (written []string, err error) {
	s := m.space(kind)
	sp, logical, before := s.sp, b.file(kind).off, *b.m.space(kind).size
	// A step copies at least twice what the batch appended, so that the
	// copy gains on the file's end.
	step := max(reclaimStep, 2*(logical-before))
	if sp.Copy == nil {
		sp.Copy = &ReclaimCopy{File: kind + "." + strconv.Itoa(m.Generation)}
	}
	c := *sp.Copy
	c.Maps = slices.Clone(c.Maps)
	old, err := openLogView(b.dir, kind, *sp, b.m)
	if err != nil {
		return nil, err
	}
	defer old.close()
	records, err := b.liveSource(m, kind, old, c.Done, logical)
	if err != nil {
		return nil, err
	}
	g, err := openAppend(filepath.Join(b.dir, c.File), c.Size, c.CRC)
	if err != nil {
		return nil, err
	}
	defer g.close()
	var tw *tableWriter
	var mg *genWriter
	var ent []byte
	to, start, end := logical, g.off, int64(-1)
	err = records(func(off int64, rec []byte) error {
		if g.off-start >= step {
			to = off
			return errStepFull
		}
		if tw == nil {
			id := newID()
			if mg, err = createGen(filepath.Join(b.dir, runName(mapKind, id))); err != nil {
				return err
			}
			written = append(written, runName(mapKind, id))
			c.Maps = append(c.Maps, id)
			tw = newTableWriter(mg, 16)
		}
		if off != end { // a new run
			ent = binary.LittleEndian.AppendUint64(ent[:0], uint64(off))
			ent = binary.LittleEndian.AppendUint64(ent, uint64(g.off))
			tw.add(ent)
		}
		end = off + int64(len(rec))
		c.Records++
		_, err := g.Write(rec)
		return err
	})
	if err != nil && err != errStepFull {
		if mg != nil {
			mg.finish()
		}
		return written, err
	}
	if tw != nil {
		sum, err := tw.finish()
		if err != nil {
			return written, err
		}
		m.Files[written[0]] = sum
	}
	if err := g.sync(); err != nil {
		return written, err
	}
	c.Size, c.CRC, c.Done = g.off, g.crc, to
	if to < logical {
		sp.Copy = &c
		return written, nil
	}
	// The copy reached the end: the new file replaces the old.
	for _, id := range sp.Maps {
		delete(m.Files, runName(mapKind, id))
	}
	*sp = Reclaimed{File: c.File, Base: logical, Head: c.Size, Maps: c.Maps, Records: c.Records}
	*s.crc = c.CRC
	return written, nil
}

// recordSource calls fn with the logical offset and bytes of records in
// order, until fn returns an error.
type recordSource func(fn func(off int64, rec []byte) error) error

// liveSource returns the live records of the file kind, read through old,
// from logical offset from to limit, as the live document entries of m
// find them.
func (b *Builder) liveSource(m *Manifest, kind string, old *logView, from, limit int64) (recordSource, error) {
	var live []int64 // offsets of live records (repository, docinfo)
	var cur []uint64 // anchors: each document's current repository offset
	if kind == anchorsName {
		cur = make([]uint64, m.Docs)
		for i := range cur {
			cur[i] = NoOffset
		}
	}
	for _, si := range m.Segments {
		s, err := openSegment(b.dir, si, m)
		if err != nil {
			return nil, err
		}
		err = s.eachDoc(func(d uint32, e DocEntry, _ []byte) error {
			if s.del.has(d) {
				return nil
			}
			fetched := e.Status == StatusFetched && e.RepoOff != NoOffset
			switch {
			case kind == repoName && fetched:
				live = append(live, int64(e.RepoOff))
			case kind == textName || kind == docInfoName:
				live = append(live, int64(e.InfoOff))
			case kind == anchorsName && fetched && d < m.Docs:
				cur[d] = e.RepoOff
			}
			return nil
		})
		s.close()
		if err != nil {
			return nil, err
		}
	}
	if kind == anchorsName {
		return func(fn func(off int64, rec []byte) error) error {
			return eachLaid(old, anchorsName, from, limit, anchorHeader, func(h []byte) int64 {
				return anchorHeader + int64(binary.LittleEndian.Uint16(h[16:]))
			}, func(off int64, rec []byte) error {
				src := binary.LittleEndian.Uint32(rec)
				if int(src) < len(cur) && cur[src] == binary.LittleEndian.Uint64(rec[8:]) {
					return fn(off, rec)
				}
				return nil
			})
		}, nil
	}
	slices.Sort(live)
	live = slices.Compact(live)
	if kind == textName {
		// The text records the live docinfo records point at, read in
		// one pass over docinfo.
		info, err := openLogView(b.dir, docInfoName, b.m.InfoSpace, b.m)
		if err != nil {
			return nil, err
		}
		refs, err := textRefs(info, live, b.info.off, b.m.InfoSpace.physical(b.info.off), m.TextFrom)
		info.close()
		if err != nil {
			return nil, err
		}
		live = refs
	}
	live = live[sort.Search(len(live), func(i int) bool { return live[i] >= from }):]
	return func(fn func(off int64, rec []byte) error) error {
		var buf []byte
		for _, off := range live {
			if kind == repoName {
				r, err := readRepoAt(old, off, limit)
				if err != nil {
					return err
				}
				buf = appendRepoRecord(buf[:0], r.Doc, r.URL, r.Page)
			} else {
				var err error
				if buf, err = readRecordAt(old, kind, off, limit, buf[:0]); err != nil {
					return err
				}
			}
			if err := fn(off, buf); err != nil {
				return err
			}
		}
		return nil
	}, nil
}

// eachLaid calls fn with the logical offset and bytes of each record of
// the file name laid out as v says, from logical offset from (a record's,
// or one a reclaim dropped) to limit, in order, reading the file once;
// size gives a record's length from its first hdr bytes.
func eachLaid(v *logView, name string, from, limit int64, hdr int, size func([]byte) int64, fn func(off int64, rec []byte) error) error {
	// The file's runs: logical start, place in the file, length.
	var runs [][3]int64
	for _, t := range v.maps {
		for i := range t.count {
			lo, ph, err := mapEntry(t, i)
			if err != nil {
				return err
			}
			if n := len(runs); n > 0 {
				runs[n-1][2] = ph - runs[n-1][1]
			}
			runs = append(runs, [3]int64{lo, ph, 0})
		}
	}
	if n := len(runs); n > 0 {
		runs[n-1][2] = v.head - runs[n-1][1]
	}
	runs = append(runs, [3]int64{v.base, v.head, limit - v.base})
	r := bufio.NewReaderSize(nil, 1<<20)
	rec := make([]byte, 0, 1024)
	for _, run := range runs {
		lo, ph, n := run[0], run[1], run[2]
		if lo+n <= from {
			continue
		}
		skip := max(0, from-lo)
		r.Reset(io.NewSectionReader(v.f, ph+skip, n-skip))
		for off := lo + skip; off < lo+n; {
			rec = rec[:hdr]
			if _, err := io.ReadFull(r, rec); err != nil {
				return corrupt("%s: truncated record at %d", name, off)
			}
			k := size(rec)
			if k < int64(hdr) || off+k > lo+n {
				return corrupt("%s: record at %d runs past the end", name, off)
			}
			rec = slices.Grow(rec, int(k)-hdr)[:k]
			if _, err := io.ReadFull(r, rec[hdr:]); err != nil {
				return corrupt("%s: truncated record at %d", name, off)
			}
			if err := fn(off, rec); err != nil {
				return err
			}
			off += k
		}
	}
	return nil
}

// textRefs returns the text offsets of the docinfo records at offs
// (logical, sorted) of docinfo as info lays it out, of logical length
// limit and length on disk size, reading the file once, in order.
func textRefs(info *logView, offs []int64, limit, size, textFrom int64) ([]int64, error) {
	r := bufio.NewReaderSize(io.NewSectionReader(info.f, 0, size), 1<<20)
	var refs []int64
	var h [8]byte
	var body []byte
	pos := int64(0)
	for _, off := range offs {
		p, err := info.phys(off)
		if err != nil {
			return nil, err
		}
		if off+8 > limit || p < pos || p+8 > size {
			return nil, corrupt("docinfo: offset %d out of range", off)
		}
		if _, err := r.Discard(int(p - pos)); err != nil {
			return nil, corrupt("docinfo at %d: %v", off, err)
		}
		if _, err := io.ReadFull(r, h[:]); err != nil {
			return nil, corrupt("docinfo at %d: %v", off, err)
		}
		n := int64(binary.LittleEndian.Uint32(h[:]))
		if off+8+n > limit || p+8+n > size {
			return nil, corrupt("docinfo at %d runs past the end", off)
		}
		body = slices.Grow(body[:0], int(n))[:n]
		if _, err := io.ReadFull(r, body); err != nil {
			return nil, corrupt("docinfo at %d: %v", off, err)
		}
		pos = p + 8 + n
		di, err := parseDocInfo(h[:], body, off, textFrom)
		if err != nil {
			return nil, err
		}
		if di.textRef != 0 {
			refs = append(refs, int64(di.textRef-1))
		}
	}
	slices.Sort(refs)
	return slices.Compact(refs), nil
}

// readRecordAt appends to buf the record (length, CRC-32C, body: a text
// or docinfo record) of the file name at logical offset off, checked.
func readRecordAt(f io.ReaderAt, name string, off, limit int64, buf []byte) ([]byte, error) {
	var h [8]byte
	if off < 0 || off+8 > limit {
		return buf, corrupt("%s: offset %d out of range", name, off)
	}
	if _, err := f.ReadAt(h[:], off); err != nil {
		return buf, corrupt("%s at %d: %v", name, off, err)
	}
	n := int64(binary.LittleEndian.Uint32(h[:]))
	if n > maxTextRecord || off+8+n > limit {
		return buf, corrupt("%s at %d runs past the end", name, off)
	}
	start := len(buf)
	buf = append(buf, make([]byte, 8+n)...)
	if _, err := f.ReadAt(buf[start:], off); err != nil {
		return buf, corrupt("%s at %d: %v", name, off, err)
	}
	if crc(buf[start+8:]) != binary.LittleEndian.Uint32(h[4:]) {
		return buf, corrupt("%s at %d: checksum mismatch", name, off)
	}
	return buf, nil
}

// removeStale deletes the reclaimed files' generations the manifest does
// not name: those a reclaim wrote before a crash, or whose removal after
// its commit a crash stopped.
func removeStale(dir string, m *Manifest) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		name := e.Name()
		for _, s := range m.spaces() {
			if name == s.sp.name(s.kind) || s.sp.Copy != nil && name == s.sp.Copy.File {
				continue
			}
			rest, ok := strings.CutPrefix(name, s.kind)
			if !ok || rest != "" && (rest[0] != '.' || !allDigits(rest[1:])) {
				continue
			}
			os.Remove(filepath.Join(dir, name))
		}
	}
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
