package sekitei

import (
	"strings"
	"unicode/utf8"

	"github.com/dlclark/regexp2"
)

// A matcher is a compiled segment regex with a literal prefilter: the
// literal text the regex requires (its anchored prefix, and literal runs
// outside groups) is checked with strings functions before the backtracking
// engine runs. Most URLs fail a segment on its first literal, so this keeps
// assignment at a few hundred nanoseconds per URL whatever the number of
// segments. The prefilter is conservative: where a regex is not plain enough
// to read (alternation at the top, inline options) it requires nothing, and
// regexp2 decides alone.
type matcher struct {
	re     *regexp2.Regexp
	prefix string   // the subject must start with it
	lits   []string // the subject must contain each
	all    bool     // the regex matches everything (".*")
}

func newMatcher(expr string) (*matcher, error) {
	re, err := compile(expr)
	if err != nil {
		return nil, err
	}
	m := &matcher{re: re, all: expr == RestRegex || expr == "^.*$" || expr == ""}
	// regexp2 reads the pattern as runes, an invalid byte as U+FFFD; so do
	// the literals.
	m.prefix, m.lits = requiredLiterals(string([]rune(expr)))
	return m, nil
}

// match reports whether the regex matches subject; runes is subject as
// runes, converted once by the caller for all segments. subject must be
// valid UTF-8 (see validSubject).
func (m *matcher) match(subject string, runes []rune) bool {
	if m.all {
		return true
	}
	if !strings.HasPrefix(subject, m.prefix) {
		return false
	}
	for _, l := range m.lits {
		if !strings.Contains(subject, l) {
			return false
		}
	}
	ok, err := m.re.MatchRunes(runes)
	return err == nil && ok
}

// requiredLiterals reads the literal runs a regex requires at its top level.
func requiredLiterals(expr string) (prefix string, lits []string) {
	if strings.Contains(expr, "(?") && strings.Count(expr, "(?") != strings.Count(expr, "(?:") ||
		strings.Contains(expr, `\Q`) || strings.Contains(expr, "-[") {
		return "", nil // inline options, look-arounds, quoting, class subtraction: read nothing
	}
	anchored := strings.HasPrefix(expr, "^")
	i := 0
	if anchored {
		i = 1
	}
	var run []byte
	first := true // the current run starts right after ^
	depth := 0
	opaque := false // an escape with arguments was met: its extent is not read
	flush := func() {
		if len(run) > 0 {
			if first && anchored {
				prefix = string(run)
			} else {
				lits = append(lits, string(run))
			}
		}
		run = run[:0]
		first = false
	}
	for i < len(expr) {
		c := expr[i]
		switch {
		case c == '\\' && i+1 < len(expr):
			r, size := utf8.DecodeRuneInString(expr[i+1:])
			i += 1 + size
			if r < utf8.RuneSelf && isWordByte(byte(r)) { // \d, \w, \b, \1, \x41, \0nn, \p{L} ...: from here on, read no literal
				flush()
				opaque = true
				continue
			}
			if depth == 0 && !opaque {
				if i < len(expr) && isQuantifier(expr[i]) {
					flush()
					continue
				}
				run = append(run, expr[i-size:i]...)
			}
			continue
		case c == '(':
			flush()
			depth++
		case c == ')':
			depth--
		case c == '|':
			if depth == 0 {
				return "", nil // alternation at the top: nothing is required
			}
		case c == '[':
			flush()
			i = skipClass(expr, i)
			continue
		case c == '{':
			flush()
			if k := strings.IndexByte(expr[i:], '}'); k >= 0 {
				i += k + 1
				continue
			}
		case isQuantifier(c):
			if depth == 0 && len(run) > 0 { // the atom before is optional or repeated
				_, size := utf8.DecodeLastRune(run)
				run = run[:len(run)-size]
			}
			flush()
		case c == '.' || c == '$' || c == '^':
			flush()
		default:
			_, size := utf8.DecodeRuneInString(expr[i:])
			if depth == 0 && !opaque {
				if i+size < len(expr) && isQuantifier(expr[i+size]) {
					flush()
				} else {
					run = append(run, expr[i:i+size]...)
				}
			}
			i += size
			continue
		}
		i++
	}
	flush()
	return prefix, lits
}

func isQuantifier(c byte) bool { return c == '?' || c == '*' || c == '+' || c == '{' }

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
}

// skipClass returns the index after the character class starting at i.
func skipClass(expr string, i int) int {
	j := i + 1
	if j < len(expr) && expr[j] == '^' {
		j++
	}
	if j < len(expr) && expr[j] == ']' {
		j++
	}
	for j < len(expr) {
		switch expr[j] {
		case '\\':
			j += 2
			continue
		case ']':
			return j + 1
		}
		j++
	}
	return len(expr)
}

// validSubject returns s as regexp2 sees it: each byte that is not valid
// UTF-8 becomes U+FFFD. Subjects from the record stream are valid already.
func validSubject(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return string([]rune(s))
}
