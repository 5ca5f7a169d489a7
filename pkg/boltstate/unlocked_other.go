//go:build !unix

package boltstate

// removeUnlocked keeps the file: without flock a live creator's file
// cannot be told from a stale one.
func removeUnlocked(string) bool { return false }
