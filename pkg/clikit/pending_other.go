//go:build !linux

package clikit

import "syscall"

// pendingSignal is only known on Linux (see pending_linux.go).
func pendingSignal(allThreads bool) syscall.Signal { return 0 }
