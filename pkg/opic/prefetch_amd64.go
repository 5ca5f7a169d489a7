package opic

import "unsafe"

// prefetch asks the CPU to bring the cache line at p in, and goes on
// without waiting for it. The greedy policy's next page is known a whole
// visit before its data is needed; a plain load would hold up the
// instructions behind it until the line came in (the loop measured about
// 20% slower with loads in place of prefetches). Go has no prefetch
// intrinsic for user code, hence the three lines of assembly.
//
//go:noescape
func prefetch(p unsafe.Pointer)
