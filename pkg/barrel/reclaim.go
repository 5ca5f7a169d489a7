package barrel

import (
	"encoding/binary"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Reclaim. The repository and the text are append-only: a page fetched
// again, or re-indexed, writes a new record, and the old one stays, dead,
// as long as the file. Once the dead records of one of them pass
// reclaimFraction of its records, a commit copies its live records, in
// order, into a new file beside it (repository.G, text.G for the commit's
// generation G), with a map from each record's logical offset to its
// place in the new file; the manifest names the new file and the map, is
// renamed in as for every commit, and only then is the old file removed.
// Offsets do not change: the document entries, the anchors (which know a
// page's version by its repository offset) and the docinfo records keep
// the logical offsets they hold, and a read maps an offset below the
// file's Base through the map, one at or past it by Base and Head. A
// commit reclaims at most one of the two files; the work is a copy of its
// live records, with no decompression.

// Reclaimed places an append-only file's records on disk.
type Reclaimed struct {
	// File is the file on disk: empty for the file's own name (never
	// reclaimed), else name.G.
	File string `json:"file,omitempty"`
	// Logical offsets below Base are the reclaimed records, found through
	// the map table Map (runName(mapKind, Map)): 16-byte records of
	// logical and physical offset. They fill the file's first Head bytes;
	// an offset at or past Base lies at offset-Base+Head.
	Base int64 `json:"base,omitempty"`
	Head int64 `json:"head,omitempty"`
	Map  int   `json:"map,omitempty"`
	// Records counts the records in the file, live or dead (from the
	// first commit of format 7 on; an older index's dead records are not
	// counted until its first reclaim).
	Records int64 `json:"records,omitempty"`
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

// reclaimFraction is the share of dead records that has a file reclaimed;
// reclaimMin the bytes below which a file is left alone.
var (
	reclaimFraction = 0.08
	reclaimMin      = int64(1 << 20)
)

// reclaimHook, when set (by tests), is called after a reclaim's files are
// written and synced ("written") and after the manifest naming them is in
// ("committed"), before the old file is removed.
var reclaimHook func(stage string)

// logView reads an append-only file at logical offsets.
type logView struct {
	f          *os.File
	base, head int64
	m          *table // nil when nothing was reclaimed
}

// openLogView opens the file dir/sp.name(def).
func openLogView(dir, def string, sp Reclaimed, m *Manifest) (*logView, error) {
	v := &logView{base: sp.Base, head: sp.Head}
	if sp.Map != 0 {
		name := runName(mapKind, sp.Map)
		sum, ok := m.Files[name]
		if !ok {
			return nil, corrupt("%s missing from %s", name, manifestName)
		}
		t, err := openTable(dir, name, sum)
		if err != nil {
			return nil, err
		}
		if t.size != 16 {
			t.close()
			return nil, corrupt("%s: records of %d bytes", name, t.size)
		}
		v.m = t
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
	v.m.close()
}

// phys maps a logical offset to the file's.
func (v *logView) phys(off int64) (int64, error) {
	if off >= v.base || v.m == nil {
		return off - v.base + v.head, nil
	}
	i, err := v.m.search(uint64(off) + 1) // the first record past off
	if err != nil {
		return 0, err
	}
	if i == 0 {
		return 0, corrupt("%s: offset %d before the first record", v.m.name, off)
	}
	r, err := v.m.rec(i - 1)
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

// reclaimDue picks the file a commit reclaims: "" for none.
func reclaimDue(m *Manifest) string {
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

// reclaim rewrites the file kind (repoName or textName) of the manifest m
// being committed with its live records only: those of the live
// documents of m's segments (written, not yet synced) and, for the text,
// their docinfo records' references. It sets m's space, length and CRC
// for the new file and returns the names it wrote, the map first.
func (b *Builder) reclaim(m *Manifest, kind string, newID func() int) (written []string, err error) {
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
				live = append(live, int64(e.RepoOff))
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
	sp, logical := &m.RepoSpace, b.repo.off
	if kind == textName {
		sp, logical = &m.TextSpace, b.text.off
		// The text records the live docinfo records point at.
		info, err := os.Open(filepath.Join(b.dir, docInfoName))
		if err != nil {
			return nil, err
		}
		defer info.Close()
		refs := live[:0]
		for _, off := range live {
			di, err := readDocInfoAt(info, off, b.info.off, m.TextFrom)
			if err != nil {
				return nil, err
			}
			if di.textRef != 0 {
				refs = append(refs, int64(di.textRef-1))
			}
		}
		live = refs
		slices.Sort(live)
		live = slices.Compact(live)
	}
	old, err := openLogView(b.dir, kind, *sp, b.m)
	if err != nil {
		return nil, err
	}
	defer old.close()
	gen := m.Generation
	file := kind + "." + strconv.Itoa(gen)
	g, err := createGen(filepath.Join(b.dir, file))
	if err != nil {
		return nil, err
	}
	written = append(written, file)
	mapID := newID()
	mg, err := createGen(filepath.Join(b.dir, runName(mapKind, mapID)))
	if err != nil {
		g.finish()
		return written, err
	}
	written = append(written, runName(mapKind, mapID))
	tw := newTableWriter(mg, 16)
	var rec, buf []byte
	for _, off := range live {
		if kind == repoName {
			r, err := readRepoAt(old, off, logical)
			if err != nil {
				g.finish()
				mg.finish()
				return written, err
			}
			buf = appendRepoRecord(buf[:0], r.Doc, r.URL, r.Page)
		} else {
			if buf, err = readRecordAt(old, off, logical, buf[:0]); err != nil {
				g.finish()
				mg.finish()
				return written, err
			}
		}
		rec = binary.LittleEndian.AppendUint64(rec[:0], uint64(off))
		rec = binary.LittleEndian.AppendUint64(rec, uint64(g.size()))
		tw.add(rec)
		g.Write(buf)
	}
	head := g.size()
	sum, err := g.finish()
	msum, merr := tw.finish()
	if err == nil {
		err = merr
	}
	if err != nil {
		return written, err
	}
	if sp.Map != 0 {
		delete(m.Files, runName(mapKind, sp.Map))
	}
	m.Files[runName(mapKind, mapID)] = msum
	*sp = Reclaimed{File: file, Base: logical, Head: head, Map: mapID, Records: int64(len(live))}
	if kind == repoName {
		m.Repository, m.RepositoryCRC = logical, sum.CRC
	} else {
		m.Text, m.TextCRC = logical, sum.CRC
	}
	return written, nil
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
			if name == sp.sp.name(sp.kind) {
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
