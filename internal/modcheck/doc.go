// Package modcheck holds tests of the module itself: what a library user
// downloads with `go get github.com/sekitei/crawlkit`.
package modcheck
