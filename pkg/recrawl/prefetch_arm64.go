package recrawl

import "unsafe"

// prefetch: see prefetch_amd64.go.
//
//go:noescape
func prefetch(p unsafe.Pointer)
