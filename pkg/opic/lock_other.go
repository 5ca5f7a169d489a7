//go:build !unix

package opic

// Lock does nothing where flock is not available.
func Lock(path string) (unlock func(), err error) { return func() {}, nil }
