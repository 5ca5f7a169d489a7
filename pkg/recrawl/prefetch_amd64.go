package recrawl

import "unsafe"

// prefetch asks the CPU to bring the cache line at p in, and goes on
// without waiting for it. recrawl rank looks up each page's host in a
// table that its streaming input evicts between two pages of one host; a
// plain load to start that lookup early holds up the instructions behind
// it until the line comes in, a prefetch does not. Go has no prefetch
// intrinsic for user code, hence the three lines of assembly (as in
// pkg/opic).
//
//go:noescape
func prefetch(p unsafe.Pointer)
