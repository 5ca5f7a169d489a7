package opic

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"time"
)

// The state file: magic, format version (uint32), payload length (uint64),
// payload, and the CRC-32C of everything before it, all little-endian. The
// magic's high byte and CR LF catch a file mangled by a text transfer, as
// PNG's do. The payload is the state's fields, then per page its name,
// cash, history, last visit and visits, then per page its sorted links as
// varint deltas (about 1-2 bytes a link).
const (
	stateMagic   = "\x89OPIC\r\n\x1a"
	stateVersion = 2 // 2 added the batch count and the sharded batch's exchange
	headerLen    = len(stateMagic) + 4 + 8
)

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// ErrNotState is returned for a file that is not an opic state.
var ErrNotState = errors.New("not an opic state file")

// MarshalBinary encodes the state. It folds pending links in first.
func (s *State) MarshalBinary() ([]byte, error) {
	s.g.Compact()
	n := s.Len()
	b := make([]byte, headerLen, headerLen+64+n*40+len(s.g.dst)*2)
	copy(b, stateMagic)
	binary.LittleEndian.PutUint32(b[8:], stateVersion)
	b = appendFloat(b, s.Damping)
	b = binary.AppendVarint(b, int64(s.Window))
	b = binary.AppendUvarint(b, uint64(s.ShardI))
	b = binary.AppendUvarint(b, uint64(s.ShardN))
	b = binary.AppendVarint(b, s.Now)
	for _, f := range []float64{s.base, s.virtCash, s.virtHist, s.totalHist} {
		b = appendFloat(b, f)
	}
	b = binary.AppendUvarint(b, s.steps)
	b = binary.AppendUvarint(b, s.cursor)
	b = binary.AppendUvarint(b, s.batches)
	awaiting := uint64(0)
	if s.awaiting {
		awaiting = 1
	}
	b = binary.AppendUvarint(b, awaiting)
	b = binary.AppendUvarint(b, uint64(s.sealed))
	b = binary.AppendUvarint(b, uint64(n))
	for id := range n {
		name := s.names.Name(uint32(id))
		b = binary.AppendUvarint(b, uint64(len(name)))
		b = append(b, name...)
	}
	for id := range n {
		b = appendFloat(b, s.cash[id])
		b = appendFloat(b, s.hist[id])
		b = binary.AppendVarint(b, s.last[id])
		b = binary.AppendUvarint(b, uint64(s.visits[id]))
	}
	for id := range n {
		links := s.g.Out(uint32(id))
		b = binary.AppendUvarint(b, uint64(len(links)))
		prev := uint32(0)
		for k, l := range links {
			if k == 0 {
				b = binary.AppendUvarint(b, uint64(l))
			} else {
				b = binary.AppendUvarint(b, uint64(l-prev-1))
			}
			prev = l
		}
	}
	binary.LittleEndian.PutUint64(b[12:], uint64(len(b)-headerLen))
	b = binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, crcTable))
	return b, nil
}

func appendFloat(b []byte, f float64) []byte {
	return binary.LittleEndian.AppendUint64(b, math.Float64bits(f))
}

// UnmarshalBinary decodes a state encoded by MarshalBinary. A foreign,
// truncated or corrupt encoding gives an error that says which.
func (s *State) UnmarshalBinary(data []byte) error {
	if len(data) < len(stateMagic) || string(data[:len(stateMagic)]) != stateMagic {
		return ErrNotState
	}
	if len(data) < headerLen {
		return fmt.Errorf("truncated opic state: %d bytes, shorter than its header", len(data))
	}
	version := binary.LittleEndian.Uint32(data[8:])
	if version < 1 || version > stateVersion {
		return fmt.Errorf("opic state format version %d, this opic reads versions 1 to %d", version, stateVersion)
	}
	plen := binary.LittleEndian.Uint64(data[12:])
	if want := uint64(headerLen) + plen + 4; uint64(len(data)) != want {
		if uint64(len(data)) < want {
			return fmt.Errorf("truncated opic state: %d bytes, want %d", len(data), want)
		}
		return fmt.Errorf("corrupt opic state: %d bytes of trailing garbage", uint64(len(data))-want)
	}
	body := data[:len(data)-4]
	if crc32.Checksum(body, crcTable) != binary.LittleEndian.Uint32(data[len(data)-4:]) {
		return errors.New("corrupt opic state: checksum mismatch")
	}
	return s.decodePayload(body[headerLen:], version)
}

// decoder reads the payload; the first error sticks.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fail(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("corrupt opic state: "+format, args...)
	}
}

func (d *decoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail("bad number")
		d.b = nil
		return 0
	}
	d.b = d.b[n:]
	return v
}

// varint reads a signed varint: binary.AppendVarint's zig-zag form of an
// unsigned one.
func (d *decoder) varint() int64 {
	u := d.uvarint()
	v := int64(u >> 1)
	if u&1 != 0 {
		v = ^v
	}
	return v
}

// float reads a float that must be finite.
func (d *decoder) float() float64 {
	if len(d.b) < 8 {
		d.fail("payload ends early")
		d.b = nil
		return 0
	}
	f := math.Float64frombits(binary.LittleEndian.Uint64(d.b))
	d.b = d.b[8:]
	if math.IsNaN(f) || math.IsInf(f, 0) {
		d.fail("non-finite number")
	}
	return f
}

func (d *decoder) bytes(n uint64) []byte {
	if n > uint64(len(d.b)) {
		d.fail("payload ends early")
		d.b = nil
		return nil
	}
	v := d.b[:n]
	d.b = d.b[n:]
	return v
}

func (s *State) decodePayload(p []byte, version uint32) error {
	d := &decoder{b: p}
	var t State
	t.Damping = d.float()
	t.Window = time.Duration(d.varint())
	t.ShardI, t.ShardN = int(d.uvarint()), int(d.uvarint())
	t.Now = d.varint()
	t.base, t.virtCash, t.virtHist, t.totalHist = d.float(), d.float(), d.float(), d.float()
	t.steps, t.cursor = d.uvarint(), d.uvarint()
	var awaiting, sealed uint64
	if version >= 2 {
		t.batches, awaiting, sealed = d.uvarint(), d.uvarint(), d.uvarint()
	}
	n := d.uvarint()
	if d.err != nil {
		return d.err
	}
	if awaiting > 1 || sealed > n {
		return errors.New("corrupt opic state: batch fields out of range")
	}
	t.awaiting, t.sealed = awaiting == 1, int(sealed)
	if t.Damping < 0 || t.Damping > 1 || t.Window < 0 || t.ShardN > 1<<20 || t.ShardI > t.ShardN {
		return errors.New("corrupt opic state: settings out of range")
	}
	// Every page takes at least 20 bytes, so n is bounded by the payload.
	if n > uint64(len(d.b))/20 || n >= math.MaxUint32 {
		return fmt.Errorf("corrupt opic state: %d pages cannot fit in %d bytes", n, len(d.b))
	}
	for range n {
		name := d.bytes(d.uvarint())
		if d.err != nil {
			return d.err
		}
		if _, added := t.names.Intern(name); !added {
			return fmt.Errorf("corrupt opic state: page %q twice", name)
		}
	}
	t.cash = make([]float64, n)
	t.hist = make([]float64, n)
	t.last = make([]int64, n)
	t.visits = make([]uint32, n)
	for id := range n {
		t.cash[id], t.hist[id] = d.float(), d.float()
		t.last[id] = d.varint()
		v := d.uvarint()
		if v > math.MaxUint32 {
			d.fail("visit count out of range")
		}
		t.visits[id] = uint32(v)
		if d.err != nil {
			return d.err
		}
	}
	t.g.n = int(n)
	t.g.off = make([]uint64, n+1)
	for id := range n {
		deg := d.uvarint()
		if deg >= n || deg > uint64(len(d.b)) {
			d.fail("page %d has %d links", id, deg)
			return d.err
		}
		next := uint64(0)
		for k := range deg {
			v := d.uvarint()
			if k > 0 {
				v += next
			}
			if v >= n || v == id {
				d.fail("bad link of page %d", id)
				return d.err
			}
			t.g.dst = append(t.g.dst, uint32(v))
			next = v + 1
		}
		t.g.off[id+1] = uint64(len(t.g.dst))
	}
	if d.err != nil {
		return d.err
	}
	if len(d.b) != 0 {
		return fmt.Errorf("corrupt opic state: %d bytes left over", len(d.b))
	}
	*s = t
	return nil
}

// syncFile flushes f to disk; tests replace it to fail a save midway.
var syncFile = (*os.File).Sync

// Load reads a state file written by Save.
func Load(path string) (*State, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	s := &State{}
	if err := s.UnmarshalBinary(data); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// Save writes the state to path crash-safely: to a temporary file in the
// same directory, synced to disk, then renamed over path (and the directory
// synced), so that path always holds either the old state or the new one,
// never a part.
func (s *State) Save(path string) error {
	data, err := s.MarshalBinary()
	if err != nil {
		return err
	}
	return writeFileSafe(path, data)
}

// writeFileSafe writes data to path as Save describes.
func writeFileSafe(path string, data []byte) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	mode := fs.FileMode(0o644)
	if st, err := os.Stat(path); err == nil {
		mode = st.Mode().Perm()
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if _, err = f.Write(data); err != nil {
		return err
	}
	if err = f.Chmod(mode); err != nil {
		return err
	}
	if err = syncFile(f); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = os.Rename(f.Name(), path); err != nil {
		return err
	}
	if d, derr := os.Open(dir); derr == nil { // make the rename durable
		d.Sync()
		d.Close()
	}
	return nil
}

// WriteFileSafe writes data to path as Save writes a state (a temporary
// file beside it, fsync, rename), first removing the temporary files a
// killed run left there.
func WriteFileSafe(path string, data []byte) error {
	removeStaleTemps(path)
	return writeFileSafe(path, data)
}
