package clikit

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
	"syscall"
	"unsafe"
)

// pendingSignal returns SIGINT or SIGTERM if the kernel holds one pending
// for the process or for the calling thread (rt_sigpending: one system
// call), or, with allThreads, for any of the process's threads (the ShdPnd
// and SigPnd masks of /proc: a file read a thread, so only the last look
// reads them); 0 otherwise.
func pendingSignal(allThreads bool) syscall.Signal {
	if set, ok := pendingHere(); ok {
		if sig := interruptIn(set); sig != 0 {
			return sig
		}
		if !allThreads {
			return 0
		}
	}
	files := []string{"/proc/self/status"}
	if tasks, err := os.ReadDir("/proc/self/task"); err == nil { // one directory read (a glob lists each thread's directory too)
		for _, t := range tasks {
			files = append(files, "/proc/self/task/"+t.Name()+"/status")
		}
	}
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(bytes.NewReader(data))
		for sc.Scan() {
			line := sc.Bytes()
			key, val, ok := bytes.Cut(line, []byte(":"))
			if !ok || (string(key) != "ShdPnd" && string(key) != "SigPnd") {
				continue
			}
			mask, err := strconv.ParseUint(string(bytes.TrimSpace(val)), 16, 64)
			if err != nil {
				continue
			}
			if sig := interruptIn(mask); sig != 0 {
				return sig
			}
		}
	}
	return 0
}

// pendingHere is the set of signals pending for the process or the
// calling thread (rt_sigpending), bit n-1 for signal n; not ok where the
// call fails (the kernel's set is 128 bits on MIPS, which refuses 8).
func pendingHere() (uint64, bool) {
	var set [2]uint64
	_, _, e := syscall.RawSyscall(syscall.SYS_RT_SIGPENDING, uintptr(unsafe.Pointer(&set[0])), 8, 0)
	return set[0], e == 0
}

// interruptIn returns SIGINT or SIGTERM if set (bit n-1 for signal n)
// holds one, SIGINT first.
func interruptIn(set uint64) syscall.Signal {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		if set&(1<<(uint(sig)-1)) != 0 {
			return sig
		}
	}
	return 0
}
