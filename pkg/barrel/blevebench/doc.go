// Package blevebench compares barrel with bleve v2, the peer search engine,
// on the same synthetic pages in one run. It is a module of its own so that
// the toolkit's module does not require bleve: a user of the library does
// not download a search engine for a benchmark. Its path lies under
// pkg/barrel so that it may use barrel's synthetic site generator
// (pkg/barrel/internal/synth).
//
//	cd pkg/barrel/blevebench && go test -run '^$' -bench VsBleve -benchtime 1x -barrel.docs 100000
package blevebench
