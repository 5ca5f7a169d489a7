// Package pipes holds the toolkit's cross-tool tests: txtar scripts that run
// every tool as a real process and pipe one into another, so that each
// natural pair of tools, the design card's pipeline and the worked examples
// of the docs are checked as a user would type them.
package pipes
