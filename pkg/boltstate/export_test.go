package boltstate

// SetSparseMin lowers the least free bytes a compaction needs, so that
// tests compact states of a few megabytes.
func SetSparseMin(n int64) (restore func()) {
	old := sparseMin
	sparseMin = n
	return func() { sparseMin = old }
}
