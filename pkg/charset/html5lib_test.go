package charset

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// encodingCase is one test of html5lib-tests' encoding/tests*.dat: a
// document and the encoding the HTML standard's sniffing gives it without
// a Content-Type charset (windows-1252 when nothing is declared).
type encodingCase struct {
	file string
	data []byte
	want string
}

func loadEncodingCases(t *testing.T) []encodingCase {
	t.Helper()
	files, _ := filepath.Glob("testdata/html5lib/tests*.dat")
	var out []encodingCase
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, part := range bytes.Split(b, []byte("#data\n"))[1:] {
			data, enc, ok := bytes.Cut(part, []byte("\n#encoding\n"))
			if !ok {
				t.Fatalf("%s: no #encoding in %q", f, part)
			}
			label := strings.TrimSpace(strings.SplitN(string(enc), "\n", 2)[0])
			want := known(label)
			if want == "" {
				t.Fatalf("%s: unknown expected encoding %q", f, label)
			}
			out = append(out, encodingCase{filepath.Base(f), data, want})
		}
	}
	return out
}

// The HTML standard's sniffing, as html5lib-tests check it: every case
// passes, or differs where this package deliberately does.
func TestHTML5libEncoding(t *testing.T) {
	cases := loadEncodingCases(t)
	exact, guessed, overruled, standard := 0, 0, 0, 0
	for _, c := range cases {
		// The Standard's algorithm alone: BOM, meta, else windows-1252.
		std := metaName(c.data)
		if bytes.HasPrefix(c.data, []byte("\xEF\xBB\xBF")) {
			std = "utf-8"
		} else if std == "" {
			std = "windows-1252"
		}
		if std == c.want {
			standard++
		} else {
			t.Errorf("%s %.80q: the sniffing algorithm gives %s, html5lib-tests say %s", c.file, c.data, std, c.want)
		}
		d := Decide(c.data, "")
		switch {
		case d.Name == c.want && d.Source != SourceSniffed:
			exact++
		case d.Source == SourceSniffed && c.want == "windows-1252" && metaName(c.data) == "":
			// Undeclared: the Standard's default is windows-1252, ours is
			// the guess (UTF-8 for ASCII and valid UTF-8).
			if d.Name != Sniff(c.data).Name {
				t.Errorf("%s %.60q: undeclared, decided %s, not the guess", c.file, c.data, d.Name)
			}
			guessed++
		case d.Source == SourceSniffed && metaName(c.data) == c.want && singleByte(c.want) &&
			hasMultibyte(c.data) && utf8.Valid(c.data) && d.Name == "utf-8":
			// Declared single-byte on valid multi-byte UTF-8 (the test
			// files are UTF-8): a declaration the bytes contradict.
			overruled++
		default:
			t.Errorf("%s %.80q: decided %s (%s), html5lib-tests say %s", c.file, c.data, d.Name, d.Source, c.want)
		}
	}
	t.Logf("%d html5lib encoding cases; BOM, prescan and document meta alone: %d pass", len(cases), standard)
	t.Logf("%d html5lib encoding cases: %d as the Standard, %d undeclared (our guess instead of windows-1252), %d declarations the UTF-8 bytes contradict",
		len(cases), exact, guessed, overruled)
	if len(cases) < 80 {
		t.Fatalf("only %d cases read", len(cases))
	}
}
