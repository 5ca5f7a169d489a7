package sekitei

import (
	"bytes"
	"strings"
	"testing"
)

// FuzzReadSegments feeds arbitrary bytes to the segments file reader: it
// must refuse or accept without panicking, and what it accepts must write
// out and read back to the same segments.
func FuzzReadSegments(f *testing.F) {
	f.Add([]byte(`{"host":"a.org","segment":0,"regex":"^/news/[0-9]+$","urls":3,"good":1,"good_share":0.3333,"quota":10}` + "\n" +
		`{"host":"a.org","segment":1,"regex":".*","urls":1,"good":0,"good_share":0,"quota":5}`))
	f.Add([]byte(TSVHeader + "\na.org\t0\t^/wiki/File:[^/?]+\\.jpg$\t2\t1\t0.5\t3\na.org\t1\t.*\t0\t0\t0\t0\n"))
	f.Add([]byte("a.org\t0\t^/(a\t1\t1\t1\t1\n"))
	f.Add([]byte(`{"host":"a.org","segment":0,"regex":"^(?i)/A|^/b{2,}"}`))
	f.Add([]byte(`{"host":"a.org","segment":0,"regex":"^/x","urls":-1}`))
	f.Add([]byte("{\"host\":\"a.org\",\"segm"))
	f.Add([]byte("\xef\xbb\xbfb.org\t3\t^/[^/?]+$\t1\t0\t0\t1\r\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		sites, err := ReadSegments(bytes.NewReader(data))
		if err != nil {
			return
		}
		var out []byte
		for _, s := range sites {
			if len(s.Segments) == 0 || s.Segments[len(s.Segments)-1].Regex != RestRegex {
				t.Fatalf("host %q does not end with the rest segment", s.Host)
			}
			for i := range s.Segments {
				out = s.Segments[i].AppendJSON(out)
				out = append(out, '\n')
			}
			// Matching never panics, whatever the regex.
			s.Assign("http://" + s.Host + "/news/12?x=1")
		}
		again, err := ReadSegments(bytes.NewReader(out))
		if err != nil {
			t.Fatalf("written segments do not read back: %v\n%s", err, out)
		}
		for h, s := range sites {
			a := again[h]
			if a == nil || len(a.Segments) != len(s.Segments) {
				t.Fatalf("host %q: segments differ after a round trip", h)
			}
			for i := range s.Segments {
				if a.Segments[i].Regex != s.Segments[i].Regex || a.Segments[i].ID != s.Segments[i].ID {
					t.Fatalf("host %q segment %d differs after a round trip", h, i)
				}
			}
		}
	})
}

// FuzzParseModel feeds arbitrary bytes to the model reader.
func FuzzParseModel(f *testing.F) {
	f.Add([]byte(`{"format":"sekitei-model","version":1,"quota":10,"stream":20,"bias":0.5,"weights":{"segments:2":1.5},"prior_scores":[-1,0,1]}`))
	f.Add([]byte(`{"format":"sekitei-model","version":2}`))
	f.Add([]byte(`{"format":"sekitei-model","version":1,"quota":10,"weights":{"a":1e400}}`))
	f.Add([]byte(`{"format":"sekitei-model","version":1,"quota":10,"weights":{`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ParseModel(data)
		if err != nil {
			if strings.TrimSpace(err.Error()) == "" {
				t.Fatal("empty error message")
			}
			return
		}
		f := NewFilter(m, 0, 0)
		for _, u := range []string{"http://a.org/segments/x", "http://a.org/", "http://a.org/a?b=c"} {
			d, err := f.Decide(u)
			if err != nil {
				t.Fatal(err)
			}
			if d.Fetch && f.Used() > f.Quota() {
				t.Fatal("quota exceeded")
			}
		}
	})
}

// FuzzPrefilter checks that the literal prefilter never changes a match:
// for any regex regexp2 compiles and any subject, matcher.match agrees with
// regexp2 alone.
func FuzzPrefilter(f *testing.F) {
	f.Add(`^/news/[0-9]+/[^/?]+/_Printed\.htm$`, "/news/1/x/_Printed.htm")
	f.Add(`^/a\?b=[^&]*&c=1$`, "/a?b=&c=1")
	f.Add(`^/ab{2,3}c`, "/abbc")
	f.Add(`^/a(?:/[^/?]+)*/?(?:\?.*)?$`, "/a/b/?q")
	f.Add(`^/x\d+y$`, "/x12y")
	f.Add(`^/[a]\]b$`, "/a]b")
	f.Add(`^/a|b$`, "b")
	f.Add(`^/a\Qb.c\E$`, "/ab.c")
	f.Add(`^\/a\.$`, "/a.")
	f.Add(`^/a.*b$`, "/ab")
	f.Fuzz(func(t *testing.T, expr, subject string) {
		m, err := newMatcher(expr)
		if err != nil {
			return
		}
		want, err := m.re.MatchString(subject)
		if err != nil {
			return // timeout
		}
		if got := m.match(validSubject(subject), []rune(subject)); got != want {
			t.Fatalf("%q on %q: prefilter+regexp2 %v, regexp2 %v (prefix %q, literals %q)", expr, subject, got, want, m.prefix, m.lits)
		}
	})
}
