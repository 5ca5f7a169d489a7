//go:build unix

package boltstate

import (
	"os"
	"syscall"
)

// removeUnlocked removes the file at p if no process holds a lock on it.
func removeUnlocked(p string) bool {
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
		return false // a live creator
	}
	return os.Remove(p) == nil
}
