//go:build !amd64 && !arm64

package recrawl

import "unsafe"

// prefetch does nothing where no assembly version is written.
func prefetch(unsafe.Pointer) {}
