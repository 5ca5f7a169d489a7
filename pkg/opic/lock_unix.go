//go:build unix

package opic

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// Lock takes an exclusive lock on the state file path (through path.lock,
// since the state itself is replaced by rename), so that two updates of one
// state, an overlapping cron job say, cannot lose each other's work. It
// fails at once if another process holds the lock. The lock ends with the
// process or when unlock is called.
func Lock(path string) (unlock func(), err error) {
	f, err := os.OpenFile(path+".lock", os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%s is being updated by another process (%s.lock is held)", path, path)
		}
		return nil, err
	}
	return func() { f.Close() }, nil
}
