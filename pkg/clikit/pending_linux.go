package clikit

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

// pendingSignal returns SIGINT or SIGTERM if the kernel holds one pending
// for the process or one of its threads (the ShdPnd and SigPnd masks of
// /proc), and 0 otherwise.
func pendingSignal() syscall.Signal {
	files := []string{"/proc/self/status"}
	if tasks, err := filepath.Glob("/proc/self/task/*/status"); err == nil {
		files = append(files, tasks...)
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
			for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
				if mask&(1<<(uint(sig)-1)) != 0 {
					return sig
				}
			}
		}
	}
	return 0
}
