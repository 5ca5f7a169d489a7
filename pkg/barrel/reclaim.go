package barrel

import (
	"bufio"
	"encoding/binary"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Reclaim. The repository and the text are append-only: a page fetched
// again writes new records, and the old ones stay, dead, as long as the
// file. Once the dead records of one of them pass reclaimFraction of its
// records, the file's live records are copied, in order and as they are,
// into a new file beside it (repository.G, text.G), at most reclaimStep
// bytes of the old file's offsets a commit, each commit's records with a
// map table from their logical offsets to their places in the new file.
// Until the copy reaches the file's end, readers and appends use the old
// file; the commit whose step reaches it makes the manifest name the new
// file and its maps, and the old file is removed after that commit. Offsets
// do not change: the document entries, the anchors (which know a page's
// version by its repository offset) and the docinfo records keep the
// logical offsets they hold, and a read maps an offset below the file's
// Base through the maps, one at or past it by Base and Head. One copy is
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
	// Records counts the records in the file, live or dead (from the
	// first commit of format 7 on; an older index's dead records are not
	// counted until its first reclaim).
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
// ("committed"), before the old file is removed.
var reclaimHook func(stage string)

// logView reads an append-only file at logical offsets.
type logView struct {
	f          *os.File
	base, head int64
	maps       []*table // in logical order
	firsts     []uint64 // each map's first logical offset
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
		if t.size != 16 || t.count == 0 || len(firsts) > 0 && t.fences[0] <= firsts[len(firsts)-1] {
			closeTables(ts)
			return nil, nil, corrupt("%s: bad map", name)
		}
		firsts = append(firsts, t.fences[0])
	}
	return ts, firsts, nil
}

func closeTables(ts []*table) {
	for _, t := range ts {
		t.close()
	}
}

// openLogView opens the file dir/sp.name(def).
func openLogView(dir, def string, sp Reclaimed, m *Manifest) (*logView, error) {
	v := &logView{base: sp.Base, head: sp.Head}
	var err error
	if v.maps, v.firsts, err = openMaps(dir, sp.Maps, m); err != nil {
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
	if v.f != nil {
		v.f.Close()
	}
	closeTables(v.maps)
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
	r, err := t.rec(i - 1) // i > 0: the table's first key is at most off
	if err != nil {
		return 0, err
	}
	return int64(binary.LittleEndian.Uint64(r[8:])) + off - int64(binary.LittleEndian.Uint64(r)), nil
}

// ReadAt reads at a logical offset (within one record).
func (v *logView) ReadAt(b []byte, off int64) (int, error) {
	p, err := v.phys(off)
	if err != nil {
		return 0, err
	}
	return v.f.ReadAt(b, p)
}

// reclaimDue picks the file a commit reclaims a step of: the one whose
// copy is under way, else the one past the fraction with more dead
// records, else "".
func reclaimDue(m *Manifest) string {
	switch {
	case m.RepoSpace.Copy != nil:
		return repoName
	case m.TextSpace.Copy != nil:
		return textName
	}
	due := func(sp Reclaimed, size int64, live uint32) float64 {
		if size < reclaimMin || sp.Records <= int64(live) {
			return 0
		}
		f := float64(sp.Records-int64(live)) / float64(sp.Records)
		if f < reclaimFraction {
			return 0
		}
		return f
	}
	r, t := due(m.RepoSpace, m.Repository, m.Fetched), due(m.TextSpace, m.Text, m.Fetched)
	switch {
	case r == 0 && t == 0:
		return ""
	case r >= t:
		return repoName
	default:
		return textName
	}
}

// reclaim copies one step of the file kind (repoName or textName) of the
// manifest m being committed: its next live records, reclaimStep bytes of
// them (or twice what the batch appended to the file, if more), those of the live documents of m's segments
// (written, not yet synced) and, for the text, their docinfo records'
// references. It returns the files it wrote (not synced); the caller syncs
// them, and the copy file. When the step reaches the file's end, m names
// the new file.
func (b *Builder) reclaim(m *Manifest, kind string, newID func() int) (written []string, err error) {
	sp, logical, before := &m.RepoSpace, b.repo.off, b.m.Repository
	if kind == textName {
		sp, logical, before = &m.TextSpace, b.text.off, b.m.Text
	}
	// A step copies at least twice what the batch appended, so that the
	// copy gains on the file's end.
	step := max(reclaimStep, 2*(logical-before))
	if sp.Copy == nil {
		sp.Copy = &ReclaimCopy{File: kind + "." + strconv.Itoa(m.Generation)}
	}
	c := *sp.Copy
	c.Maps = slices.Clone(c.Maps)
	from := c.Done
	inStep := func(off int64) bool { return off >= from }
	var live []int64
	for _, si := range m.Segments {
		s, err := openSegment(b.dir, si, m)
		if err != nil {
			return nil, err
		}
		err = s.eachDoc(func(d uint32, e DocEntry, _ []byte) error {
			if s.del.has(d) {
				return nil
			}
			switch {
			case kind == repoName && e.Status == StatusFetched && e.RepoOff != NoOffset:
				if inStep(int64(e.RepoOff)) {
					live = append(live, int64(e.RepoOff))
				}
			case kind == textName:
				live = append(live, int64(e.InfoOff))
			}
			return nil
		})
		s.close()
		if err != nil {
			return nil, err
		}
	}
	slices.Sort(live)
	live = slices.Compact(live)
	if kind == textName {
		// The text records the live docinfo records point at, read in
		// one pass over docinfo.
		refs, err := textRefs(filepath.Join(b.dir, docInfoName), live, b.info.off, m.TextFrom)
		if err != nil {
			return nil, err
		}
		live = slices.DeleteFunc(refs, func(off int64) bool { return !inStep(off) })
		slices.Sort(live)
		live = slices.Compact(live)
	}
	old, err := openLogView(b.dir, kind, *sp, b.m)
	if err != nil {
		return nil, err
	}
	defer old.close()
	g, err := openAppend(filepath.Join(b.dir, c.File), c.Size, c.CRC)
	if err != nil {
		return nil, err
	}
	defer g.close()
	var tw *tableWriter
	var mg *genWriter
	if len(live) > 0 {
		id := newID()
		if mg, err = createGen(filepath.Join(b.dir, runName(mapKind, id))); err != nil {
			return nil, err
		}
		written = append(written, runName(mapKind, id))
		c.Maps = append(c.Maps, id)
		tw = newTableWriter(mg, 16)
	}
	var rec, buf []byte
	to, start := logical, g.off
	for i, off := range live {
		if g.off-start >= step {
			to = off
			live = live[:i]
			break
		}
		if kind == repoName {
			r, err := readRepoAt(old, off, logical)
			if err != nil {
				mg.finish()
				return written, err
			}
			buf = appendRepoRecord(buf[:0], r.Doc, r.URL, r.Page)
		} else if buf, err = readRecordAt(old, off, logical, buf[:0]); err != nil {
			mg.finish()
			return written, err
		}
		rec = binary.LittleEndian.AppendUint64(rec[:0], uint64(off))
		rec = binary.LittleEndian.AppendUint64(rec, uint64(g.off))
		tw.add(rec)
		g.Write(buf)
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
	c.Size, c.CRC, c.Done, c.Records = g.off, g.crc, to, c.Records+int64(len(live))
	if to < logical {
		sp.Copy = &c
		return written, nil
	}
	// The copy reached the end: the new file replaces the old.
	for _, id := range sp.Maps {
		delete(m.Files, runName(mapKind, id))
	}
	*sp = Reclaimed{File: c.File, Base: logical, Head: c.Size, Maps: c.Maps, Records: c.Records}
	if kind == repoName {
		m.RepositoryCRC = c.CRC
	} else {
		m.TextCRC = c.CRC
	}
	return written, nil
}

// textRefs returns the text offsets of the docinfo records at offs
// (sorted) of the file at path, of committed length limit, reading it
// once, in order.
func textRefs(path string, offs []int64, limit, textFrom int64) ([]int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := bufio.NewReaderSize(io.LimitReader(f, limit), 1<<20)
	var refs []int64
	var h [8]byte
	var body []byte
	pos := int64(0)
	for _, off := range offs {
		if off < pos || off+8 > limit {
			return nil, corrupt("docinfo: offset %d out of range", off)
		}
		if _, err := r.Discard(int(off - pos)); err != nil {
			return nil, corrupt("docinfo at %d: %v", off, err)
		}
		if _, err := io.ReadFull(r, h[:]); err != nil {
			return nil, corrupt("docinfo at %d: %v", off, err)
		}
		n := int64(binary.LittleEndian.Uint32(h[:]))
		if off+8+n > limit {
			return nil, corrupt("docinfo at %d runs past the end", off)
		}
		body = slices.Grow(body[:0], int(n))[:n]
		if _, err := io.ReadFull(r, body); err != nil {
			return nil, corrupt("docinfo at %d: %v", off, err)
		}
		pos = off + 8 + n
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

// readRecordAt appends to buf the text record (length, CRC-32C, body) at
// logical offset off, checked.
func readRecordAt(f io.ReaderAt, off, limit int64, buf []byte) ([]byte, error) {
	var h [8]byte
	if off < 0 || off+8 > limit {
		return buf, corrupt("%s: offset %d out of range", textName, off)
	}
	if _, err := f.ReadAt(h[:], off); err != nil {
		return buf, corrupt("%s at %d: %v", textName, off, err)
	}
	n := int64(binary.LittleEndian.Uint32(h[:]))
	if n > maxTextRecord || off+8+n > limit {
		return buf, corrupt("%s at %d runs past the end", textName, off)
	}
	start := len(buf)
	buf = append(buf, make([]byte, 8+n)...)
	if _, err := f.ReadAt(buf[start:], off); err != nil {
		return buf, corrupt("%s at %d: %v", textName, off, err)
	}
	if crc(buf[start+8:]) != binary.LittleEndian.Uint32(h[4:]) {
		return buf, corrupt("%s at %d: checksum mismatch", textName, off)
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
		for _, sp := range []struct {
			kind string
			sp   Reclaimed
		}{{repoName, m.RepoSpace}, {textName, m.TextSpace}} {
			if name == sp.sp.name(sp.kind) || sp.sp.Copy != nil && name == sp.sp.Copy.File {
				continue
			}
			rest, ok := strings.CutPrefix(name, sp.kind)
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
