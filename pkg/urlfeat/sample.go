package urlfeat

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
)

// A LineFile is a text file of URLs held in memory, one per line, for
// drawing samples without reading it again.
type LineFile struct {
	Name  string
	text  []byte
	lines []int // start offset of each line; a sentinel end at len(text)+1
}

// ReadLineFile reads a whole file of lines.
func ReadLineFile(name string) (*LineFile, error) {
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	data = bytes.TrimPrefix(data, []byte("\xEF\xBB\xBF"))
	lf := &LineFile{Name: name, text: data}
	lf.lines = append(lf.lines, 0)
	for off := 0; ; {
		k := bytes.IndexByte(data[off:], '\n')
		if k < 0 {
			break
		}
		off += k + 1
		lf.lines = append(lf.lines, off)
	}
	if len(data) == 0 || data[len(data)-1] != '\n' {
		lf.lines = append(lf.lines, len(data)+1)
	}
	return lf, nil
}

// Len returns the number of lines.
func (lf *LineFile) Len() int { return len(lf.lines) - 1 }

// Line returns line i (0-based) without its line ending. Only sampled lines
// become strings, so a large file is never copied whole.
func (lf *LineFile) Line(i int) string {
	s := lf.text[lf.lines[i] : lf.lines[i+1]-1]
	if len(s) > 0 && s[len(s)-1] == '\r' {
		s = s[:len(s)-1]
	}
	return string(s)
}

// Sample returns up to n distinct line indexes drawn uniformly at random
// (all of them, in random order, when the file has fewer than n lines).
func (lf *LineFile) Sample(n int, rng *rand.Rand) []int {
	total := lf.Len()
	if n > total {
		n = total
	}
	// Partial Fisher-Yates over a sparse permutation: O(n) time and memory
	// however long the file.
	swapped := make(map[int]int, n)
	at := func(i int) int {
		if v, ok := swapped[i]; ok {
			return v
		}
		return i
	}
	out := make([]int, n)
	for i := 0; i < n; i++ {
		j := i + rng.IntN(total-i)
		out[i] = at(j)
		swapped[j] = at(i)
	}
	return out
}

// A LineError is a URL of a line file that could not be used.
type LineError struct {
	File string
	Line int // 1-based
	Err  error
}

func (e *LineError) Error() string { return fmt.Sprintf("%s: line %d: %v", e.File, e.Line, e.Err) }

// CountSample draws n lines from each file and counts their features. Lines
// that are blank are skipped; bad URLs are passed to bad (which may be nil)
// and skipped. It returns the counter and the sample size per file, the N of
// the homework's alpha*N threshold.
func CountSample(files []*LineFile, n int, rng *rand.Rand, bad func(*LineError)) (*Counter, int) {
	var ex Extractor
	c := NewCounter()
	size := 0
	for _, lf := range files {
		idx := lf.Sample(n, rng)
		if len(idx) > size {
			size = len(idx)
		}
		for _, i := range idx {
			u := strings.TrimSpace(lf.Line(i))
			if u == "" {
				continue
			}
			f, err := ex.Extract(u)
			if err != nil {
				if bad != nil {
					bad(&LineError{File: lf.Name, Line: i + 1, Err: err})
				}
				continue
			}
			c.Add(f)
		}
	}
	return c, size
}
