package boltstate

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"
)

// A state is created whole or not at all: Create writes the new file
// beside its path under a name of its own (.NAME.new-PID-N), fills it
// (bbolt's header pages and the store's first transaction), syncs it and
// links it into place. A kill at any moment leaves either no state at the
// path or a complete one; the temporary file a killed creator left is
// removed by the next creation or Open for writing at the path (it is
// known stale when nobody holds its bbolt lock). A compaction's copy (PATH.compact) a kill left
// is removed by the next Open for writing, which compacts again if the
// state is still sparse.

// newPrefix is the start of the name of a state being created beside path.
func newPrefix(path string) string { return "." + filepath.Base(path) + ".new-" }

var createSeq int

// Create creates the state at path if there is none: init, if not nil,
// runs in the file's first write transaction (it makes the store's
// buckets and meta). A state that exists is left alone, and one made by
// another process meanwhile wins. Open calls Create with no init for a
// writer whose path does not exist.
func Create(path string, o Options, init func(*Tx) error) error {
	return create(path, o, init, false)
}

func create(path string, o Options, init func(*Tx) error, retried bool) (err error) {
	if _, err := os.Lstat(path); err == nil || !errors.Is(err, os.ErrNotExist) {
		return err
	}
	dir := filepath.Dir(path)
	removeStaleNew(path)
	createSeq++
	tmp := filepath.Join(dir, newPrefix(path)+strconv.Itoa(os.Getpid())+"-"+strconv.Itoa(createSeq))
	os.Remove(tmp)
	defer os.Remove(tmp) // linked into place, or failed
	b, err := bolt.Open(tmp, 0o644, &bolt.Options{Timeout: time.Second, NoSync: o.NoSync, FreelistType: bolt.FreelistMapType})
	if err != nil {
		return fmt.Errorf("%s: creating: %w", path, err)
	}
	d := &DB{bolt: b, path: tmp, opts: o}
	if init != nil {
		err = d.Update(init)
	}
	if err == nil && !o.NoSync {
		err = b.Sync()
	}
	if cerr := b.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("%s: creating: %w", path, err)
	}
	// A link, not a rename: it fails if another process created the state
	// meanwhile, whose file is then kept.
	if err := os.Link(tmp, path); err != nil && !errors.Is(err, os.ErrExist) {
		if errors.Is(err, os.ErrNotExist) && !retried {
			// Another creator found the file unlocked between its close
			// and this link and took it for stale: make it again.
			return create(path, o, init, true)
		}
		return fmt.Errorf("%s: creating: %w", path, err)
	}
	if !o.NoSync {
		SyncDir(dir)
	}
	return nil
}

// removeStaleNew removes the states a killed creator left being created
// beside path (.NAME.new-*), those no process holds a lock on (bbolt locks
// the files it has open).
func removeStaleNew(path string) {
	dir := filepath.Dir(path)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), newPrefix(path)) {
			removeUnlocked(filepath.Join(dir, e.Name()))
		}
	}
}

// removeStaleCompaction removes the copy a compaction killed before its
// rename left beside path (PATH.compact) and reports whether there was
// one. The caller holds the state's write lock, which every compaction
// holds throughout, so the copy is no one's.
func removeStaleCompaction(path string) bool {
	return os.Remove(path+".compact") == nil
}
