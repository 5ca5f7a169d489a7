package boltstate

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	bolt "go.etcd.io/bbolt"
)

// A state file only grows: bbolt keeps the pages a transaction frees in a
// free list, which it reads whole when the file is opened for writing and
// writes whole at every commit, and it never gives them back to the file
// system. One large batch (a seed import, a turn after weeks offline, a
// state aged in chunks of a hundred turns) leaves a free list of hundreds
// of thousands of pages, and every later turn pays for it: at a year of a
// synthetic crawl, a recrawl state of 3.2 GB held 1.4 GB of free pages and
// half-empty leaves, and applying a turn took 0.77 s where the same state
// compacted (1.1 GB) took 0.38 s. So a writer compacts its state once the
// free pages pass a quarter of the file (and 64 MiB): turns of ordinary
// size free about what they allocate and stay far below it.
const sparseFraction = 0.25

var sparseMin int64 = 64 << 20 // a variable for the tests

// compactTxBytes bounds the bytes copied in one transaction of a
// compaction, so that compacting holds a bounded amount of memory.
const compactTxBytes = 64 << 20

// A Compaction is what CompactIfSparse did.
type Compaction struct {
	Done          bool          // false: the file was not sparse enough
	Before, After int64         // the file's size
	Free          int64         // the free pages' bytes before
	Took          time.Duration // the compaction's time
}

func (c Compaction) String() string {
	return fmt.Sprintf("%d MB (%d MB of it free pages) to %d MB in %.1f s",
		c.Before>>20, c.Free>>20, c.After>>20, c.Took.Seconds())
}

// CompactIfSparse rewrites a state opened for writing without its free
// pages, when they pass a quarter of its pages and 64 MiB.
// The compacted copy is written beside the file (PATH.compact), checked
// (every value's checksum, as a reader would), synced, and renamed over
// the file, whose lock this process holds throughout; the DB then reads
// the new file. Any failure, a full disk or a damaged page, leaves the
// file as it was (the copy is removed) and is returned: the caller's
// batch, committed before, is not affected. A compaction done whose
// reopening failed is returned Done, with the error.
func (d *DB) CompactIfSparse() (c Compaction, err error) {
	if d.opts.ReadOnly {
		return c, nil
	}
	st, err := os.Stat(d.path)
	if err != nil {
		return c, err
	}
	// The free pages against the pages in use or free, below the high
	// water mark: bbolt grows the file ahead of it, in steps of 16 MiB.
	var used int64
	if err := d.View(func(tx *Tx) error { used = tx.Size(); return nil }); err != nil {
		return c, err
	}
	stats := d.bolt.Stats()
	c.Before = st.Size()
	c.Free = int64(stats.FreePageN+stats.PendingPageN) * int64(d.bolt.Info().PageSize)
	if c.Free < sparseMin || float64(c.Free) < sparseFraction*float64(used) {
		return c, nil
	}
	t0 := time.Now()
	tmp := d.path + ".compact"
	if err := d.compactTo(tmp); err != nil {
		os.Remove(tmp)
		return c, err
	}
	if err := os.Rename(tmp, d.path); err != nil {
		os.Remove(tmp)
		return c, err
	}
	SyncDir(filepath.Dir(d.path))
	// This process still holds the old file's lock: a process waiting for
	// it finds the path replaced when it gets it (openSame) and opens the
	// new file.
	c.Done, c.Took = true, time.Since(t0)
	if st, err := os.Stat(d.path); err == nil {
		c.After = st.Size()
	}
	d.bolt.Close()
	b, err := openSame(d.path, d.opts)
	if err != nil {
		// Compacted, but another process took the lock first and held it
		// past the timeout: this DB is closed.
		return c, fmt.Errorf("%s: reopening after compaction: %w", d.path, err)
	}
	d.bolt = b
	return c, nil
}

// compactTo writes the state's buckets, every value checked on its way, to
// a new file at tmp, full pages in key order, and syncs it. (bbolt's own
// Compact copies without reading values, so a damaged record would be
// copied into a file that looks new; the stores keep no nested buckets or
// sequences, so this copy is a loop.)
func (d *DB) compactTo(tmp string) (err error) {
	os.Remove(tmp)
	dst, err := bolt.Open(tmp, 0o644, &bolt.Options{NoSync: true, FreelistType: bolt.FreelistMapType})
	if err != nil {
		return err
	}
	defer func() {
		if cerr := dst.Close(); err == nil {
			err = cerr
		}
	}()
	out, err := dst.Begin(true)
	if err != nil {
		return err
	}
	defer func() { out.Rollback() }()
	err = d.View(func(tx *Tx) error {
		return tx.tx.ForEach(func(name []byte, _ *bolt.Bucket) error {
			ob, err := out.CreateBucket(name)
			if err != nil {
				return err
			}
			ob.FillPercent = 1
			size := 0
			c := tx.tx.Bucket(name).Cursor()
			for k, v := c.First(); k != nil; k, v = c.Next() {
				if _, ok := unseal(k, v); !ok {
					return tx.Bucket(name).corrupt(k)
				}
				if size >= compactTxBytes {
					if err := out.Commit(); err != nil {
						return err
					}
					if out, err = dst.Begin(true); err != nil {
						return err
					}
					ob = out.Bucket(name)
					ob.FillPercent = 1
					size = 0
				}
				if err := ob.Put(k, v); err != nil {
					return err
				}
				size += len(k) + len(v)
			}
			return nil
		})
	})
	if err != nil {
		return err
	}
	if err := out.Commit(); err != nil {
		return fmt.Errorf("%s: %w", tmp, err)
	}
	if err := dst.Sync(); err != nil {
		return fmt.Errorf("%s: %w", tmp, err)
	}
	return nil
}

// SyncDir makes a rename in dir durable; the stores call it after
// renaming a state into place.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
