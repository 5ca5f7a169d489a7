// Package boltdamage damages real bbolt state files the ways a disk, a
// careless copy or a foreign writer does, for the stores' tests: it finds
// where a record lives in the file and flips, zeroes, cuts, appends to or
// swaps what is there.
package boltdamage

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"

	bolt "go.etcd.io/bbolt"
)

// Locate returns the file offset and length of the stored value (its
// checksum included) of key in bucket: where a record's bytes sit on disk.
func Locate(path string, bucket, key []byte) (off int64, n int, err error) {
	var value []byte
	db, err := bolt.Open(path, 0, &bolt.Options{ReadOnly: true})
	if err != nil {
		return 0, 0, err
	}
	defer db.Close()
	base := db.Info().Data
	err = db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucket)
		if b == nil {
			return fmt.Errorf("no bucket %s", bucket)
		}
		v := b.Get(key)
		if len(v) == 0 {
			return fmt.Errorf("no record %q in %s", key, bucket)
		}
		// Values of a read transaction point into bbolt's map of the file,
		// except those of a small bucket kept inline in its parent's page,
		// which bbolt may copy: those are found by their key and value,
		// stored side by side.
		off, n = int64(uintptr(unsafe.Pointer(&v[0]))-base), len(v)
		if size := int64(db.Info().PageSize) * int64(tx.Size()/int64(db.Info().PageSize)); off < 0 || off+int64(n) > size {
			off = -1
			value = bytes.Clone(v)
		}
		return nil
	})
	if err != nil || off >= 0 {
		return off, n, err
	}
	db.Close()
	// Free pages may hold older copies of the same bytes: the live one is
	// the copy whose change changes what bbolt reads.
	file, err := os.ReadFile(path)
	if err != nil {
		return 0, 0, err
	}
	pair := append(bytes.Clone(key), value...)
	for i := 0; ; i++ {
		j := bytes.Index(file[i:], pair)
		if j < 0 {
			return 0, 0, fmt.Errorf("record %q of %s: no live copy found in the file", key, bucket)
		}
		i += j
		at := int64(i + len(key))
		if live(path, file, at, bucket, key, value) {
			return at, len(value), nil
		}
	}
}

// live reports whether the value bytes at off are the ones bbolt reads for
// key: a copy of the file with the last of them changed reads otherwise.
func live(path string, file []byte, off int64, bucket, key, value []byte) bool {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".locate-*")
	if err != nil {
		return false
	}
	defer os.Remove(tmp.Name())
	b := bytes.Clone(file)
	b[off+int64(len(value))-1] ^= 0x01
	tmp.Write(b)
	tmp.Close()
	db, err := bolt.Open(tmp.Name(), 0, &bolt.Options{ReadOnly: true})
	if err != nil {
		return false
	}
	defer db.Close()
	changed := false
	db.View(func(tx *bolt.Tx) error {
		if bk := tx.Bucket(bucket); bk != nil {
			changed = !bytes.Equal(bk.Get(key), value)
		}
		return nil
	})
	return changed
}

// A Damage changes the file at path.
type Damage struct {
	Name string
	Do   func(t *testing.T, path string)
}

// Flip inverts n bytes centred on the value of key in bucket.
func Flip(bucket, key string, n int) Damage {
	return Damage{fmt.Sprintf("flip %d bytes at %s %q", n, bucket, clip(key)), func(t *testing.T, path string) {
		off, l, err := Locate(path, []byte(bucket), []byte(key))
		if err != nil {
			t.Fatal(err)
		}
		b := read(t, path)
		start := max(0, off+int64(l)/2-int64(n)/2)
		for i := start; i < start+int64(n) && i < int64(len(b)); i++ {
			b[i] ^= 0xFF
		}
		write(t, path, b)
	}}
}

// FlipOne inverts the last byte of the value of key in bucket: the
// smallest damage, one that no page structure notices.
func FlipOne(bucket, key string) Damage {
	return Damage{fmt.Sprintf("flip one byte of %s %q", bucket, clip(key)), func(t *testing.T, path string) {
		off, l, err := Locate(path, []byte(bucket), []byte(key))
		if err != nil {
			t.Fatal(err)
		}
		b := read(t, path)
		b[off+int64(l)-1] ^= 0x01
		write(t, path, b)
	}}
}

// ZeroPage zeroes the page holding the value of key in bucket.
func ZeroPage(bucket, key string) Damage {
	return Damage{fmt.Sprintf("zero the page of %s %q", bucket, clip(key)), func(t *testing.T, path string) {
		off, _, err := Locate(path, []byte(bucket), []byte(key))
		if err != nil {
			t.Fatal(err)
		}
		b := read(t, path)
		ps := int64(os.Getpagesize())
		start := off / ps * ps
		clear(b[start:min(start+ps, int64(len(b)))])
		write(t, path, b)
	}}
}

// Truncate cuts the file to the given share of its length.
func Truncate(share float64) Damage {
	return Damage{fmt.Sprintf("truncate to %.2f", share), func(t *testing.T, path string) {
		b := read(t, path)
		write(t, path, b[:int(float64(len(b))*share)])
	}}
}

// Append appends n bytes of garbage.
func Append(n int) Damage {
	return Damage{fmt.Sprintf("append %d bytes", n), func(t *testing.T, path string) {
		write(t, path, append(read(t, path), bytes.Repeat([]byte("garbage\n"), n/8+1)[:n]...))
	}}
}

// Swap exchanges the stored values of two keys of bucket, checksums and
// all, through bbolt itself: the file stays a valid bbolt file.
func Swap(bucket, k1, k2 string) Damage {
	return Damage{fmt.Sprintf("swap %s %q and %q", bucket, clip(k1), clip(k2)), func(t *testing.T, path string) {
		db, err := bolt.Open(path, 0o644, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		err = db.Update(func(tx *bolt.Tx) error {
			b := tx.Bucket([]byte(bucket))
			v1, v2 := bytes.Clone(b.Get([]byte(k1))), bytes.Clone(b.Get([]byte(k2)))
			if v1 == nil || v2 == nil {
				return fmt.Errorf("swap: %q or %q missing in %s", k1, k2, bucket)
			}
			return errorsJoin(b.Put([]byte(k1), v2), b.Put([]byte(k2), v1))
		})
		if err != nil {
			t.Fatal(err)
		}
	}}
}

func errorsJoin(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// Check copies the state good once per damage, damages the copy and runs
// each of ops on it: every op must fail with an error naming the copy's
// path and containing want's text for the damage (when want has one), and
// leave the file byte for byte as the damage left it.
func Check(t *testing.T, good string, damages []Damage, want map[string]string, ops map[string]func(path string) error) {
	t.Helper()
	orig := read(t, good)
	for i, d := range damages {
		for name, op := range ops {
			path := filepath.Join(t.TempDir(), fmt.Sprintf("damaged-%d.state", i))
			write(t, path, orig)
			d.Do(t, path)
			before := read(t, path)
			err := op(path)
			switch {
			case err == nil:
				t.Errorf("%s, then %s: no error", d.Name, name)
			case !strings.Contains(err.Error(), path):
				t.Errorf("%s, then %s: %v: does not name the path", d.Name, name, err)
			case want[d.Name] != "" && !strings.Contains(err.Error(), want[d.Name]):
				t.Errorf("%s, then %s: %v, want %q", d.Name, name, err, want[d.Name])
			default:
				t.Logf("%s, then %s: %v", d.Name, name, err)
			}
			if after := read(t, path); !bytes.Equal(before, after) {
				t.Errorf("%s, then %s: the damaged file was written to", d.Name, name)
			}
		}
	}
}

func read(t *testing.T, path string) []byte {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func write(t *testing.T, path string, b []byte) {
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}
