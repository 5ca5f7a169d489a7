package opic

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// adviseHuge asks the kernel to back the whole 2 MiB pages inside s with
// huge pages, before s is first written. The arrays of a Run are read at
// random; with 4 KiB pages nearly every read also misses the TLB. Where
// transparent huge pages are off, or only on request (the default of many
// distributions), this is what turns them on; errors are harmless.
func adviseHuge[T any](s []T) {
	const huge = 2 << 20
	var z T
	size := uintptr(len(s)) * unsafe.Sizeof(z)
	if size < 2*huge {
		return
	}
	b := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), size)
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	start := (huge - p%huge) % huge
	end := size - (p+size)%huge
	if end > start {
		_ = unix.Madvise(b[start:end], unix.MADV_HUGEPAGE)
	}
}
