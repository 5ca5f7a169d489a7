//go:build !linux

package opic

func adviseHuge[T any](s []T) {}
