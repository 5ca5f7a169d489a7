package urlfeat

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strings"

	"github.com/sekitei/crawlkit/pkg/record"
)

// A LineFile is a text file of URLs held in memory, one per line, for
// drawing samples without reading it again.
type LineFile struct {
	Name string
	// MaxLine is the longest line used, in bytes (0: record.DefaultMaxLine);
	// a longer one drawn is reported bad and skipped.
	MaxLine int
	text    []byte
	lines   []int // start offset of each line; a sentinel end at len(text)+1
}

// ReadLineFile reads a whole file of lines (a gzip file as the text it
// holds). A line longer than record.DefaultMaxLine is kept as a blank line;
// see ReadLineFileMax.
func ReadLineFile(name string) (*LineFile, error) { return ReadLineFileMax(name, 0, nil) }

// ReadLineFileMax is ReadLineFile with the longest line kept, in bytes (0:
// record.DefaultMaxLine): a longer line is read through without being held,
// kept as a blank line (so that line numbers stay), and passed to bad
// (which may be nil). The memory held is the file's kept lines.
func ReadLineFileMax(name string, maxLine int, bad func(*LineError)) (*LineFile, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r, done, err := record.Decompressed(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	defer done()
	lr := record.NewLineReader(r)
	lr.SetMax(maxLine)
	lf := &LineFile{Name: name, MaxLine: maxLine}
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
		lf.text = make([]byte, 0, st.Size()+1)
	}
	lf.lines = append(lf.lines, 0)
	for {
		line, n, err := lr.Next()
		if err == io.EOF {
			break
		}
		var tl *record.LineTooLongError
		if errors.As(err, &tl) {
			if bad != nil {
				bad(&LineError{File: name, Line: n, Err: tl})
			}
			line = nil
		} else if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		lf.text = append(append(lf.text, line...), '\n')
		lf.lines = append(lf.lines, len(lf.text))
	}
	if len(lf.lines) == 1 { // an empty file: one blank line
		lf.text = append(lf.text, '\n')
		lf.lines = append(lf.lines, 1)
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
		maxLine := lf.MaxLine
		if maxLine <= 0 {
			maxLine = record.DefaultMaxLine
		}
		for _, i := range idx {
			if n := lf.lines[i+1] - 1 - lf.lines[i]; n > maxLine {
				if bad != nil {
					bad(&LineError{File: lf.Name, Line: i + 1, Err: &record.LineTooLongError{Len: n, Max: maxLine}})
				}
				continue
			}
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
