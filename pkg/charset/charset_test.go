package charset

import (
	"strings"
	"testing"

	"golang.org/x/text/encoding/charmap"
)

const russianText = `Новости дня: правительство обсудило бюджет на следующий год. Эксперты считают,
что рост цен замедлится, а курс рубля останется стабильным. Подробности в нашем материале.`

const frenchText = `Le café de la gare est fermé. Voilà une société très agréable à côté du marché,
où l'on mange des crêpes et du pâté.`

func enc(t *testing.T, cm *charmap.Charmap, s string) []byte {
	t.Helper()
	b, err := cm.NewEncoder().Bytes([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func page(head string, body []byte) []byte {
	return append([]byte("<html><head>"+head+"<title>t</title></head><body><p>"), append(body, "</p></body></html>"...)...)
}

func TestDecide(t *testing.T) {
	cp1251 := enc(t, charmap.Windows1251, russianText)
	koi8 := enc(t, charmap.KOI8R, russianText)
	latin := enc(t, charmap.Windows1252, frenchText)
	for _, c := range []struct {
		name      string
		body      []byte
		ct        string
		want, src string
		wantText  string
	}{
		{"header", page("", cp1251), "text/html; charset=windows-1251", "windows-1251", SourceHeader, russianText},
		{"header alias cp1251", page("", cp1251), "text/html; charset=cp1251", "windows-1251", SourceHeader, russianText},
		{"meta http-equiv", page(`<meta http-equiv="Content-Type" content="text/html; charset=windows-1251">`, cp1251), "text/html", "windows-1251", SourceMeta, russianText},
		{"meta charset koi8", page(`<meta charset=koi8-r>`, koi8), "", "koi8-r", SourceMeta, russianText},
		{"bom", append([]byte("\xEF\xBB\xBF"), page("", []byte(russianText))...), "text/html; charset=windows-1251", "utf-8", SourceBOM, russianText},
		{"undeclared cp1251", page("", cp1251), "text/html", "windows-1251", SourceSniffed, russianText},
		{"undeclared koi8-r", page("", koi8), "text/html", "koi8-r", SourceSniffed, russianText},
		{"undeclared 1252", page("", latin), "text/html", "windows-1252", SourceSniffed, frenchText},
		{"undeclared utf-8", page("", []byte(russianText)), "", "utf-8", SourceSniffed, russianText},
		{"meta lies utf-8 on cp1251", page(`<meta charset="utf-8">`, cp1251), "text/html", "windows-1251", SourceSniffed, russianText},
		{"header lies utf-8 on koi8", page("", koi8), "text/html; charset=UTF-8", "koi8-r", SourceSniffed, russianText},
		{"meta says cp1251 on utf-8", page(`<meta charset="windows-1251">`, []byte(russianText)), "", "utf-8", SourceSniffed, russianText},
		{"unknown name", page(`<meta charset="x-no-such">`, cp1251), "text/html; charset=bogus", "windows-1251", SourceSniffed, russianText},
		{"ascii", page("", []byte("plain")), "", "utf-8", SourceSniffed, "plain"},
		// Declared UTF-8 with invalid bytes: UTF-8, each bad run as U+FFFD,
		// not a single-byte guess (windows-1252 would read "caf\xe9" as "café").
		{"header utf-8, a bad byte", page("", []byte("Le caf\xe9 est ferm\xe9.")), "text/html; charset=utf-8", "utf-8", SourceHeader, "Le caf\uFFFD est ferm\uFFFD."},
		{"meta utf-8, bad bytes in Russian", page(`<meta charset="utf-8">`, []byte("Новости \xff\xfe дня")), "", "utf-8", SourceMeta, "Новости \uFFFD дня"},
		{"header utf-8 on latin", page("", latin), "text/html; charset=utf-8", "utf-8", SourceHeader, "Le caf\uFFFD de la gare"},
	} {
		got, d := Decode(c.body, c.ct)
		if d.Name != c.want || d.Source != c.src {
			t.Errorf("%s: decided %s/%s, want %s/%s", c.name, d.Name, d.Source, c.want, c.src)
		}
		if !strings.Contains(string(got), c.wantText) {
			t.Errorf("%s: decoded text lacks the original: %.80q", c.name, got)
		}
	}
}

// Short Cyrillic snippets, as in titles and link texts, still separate.
func TestSniffShort(t *testing.T) {
	for _, s := range []string{"Главная", "Привет, мир", "Кинопоиск: фильмы", "За рулём"} {
		if d := Sniff(enc(t, charmap.Windows1251, s)); d.Name != "windows-1251" {
			t.Errorf("%q in cp1251: %s", s, d.Name)
		}
		if d := Sniff(enc(t, charmap.KOI8R, s)); d.Name != "koi8-r" {
			t.Errorf("%q in koi8-r: %s", s, d.Name)
		}
	}
	for _, s := range []string{"café", "Müller straße", "naïve résumé"} {
		if d := Sniff(enc(t, charmap.Windows1252, s)); d.Name != "windows-1252" {
			t.Errorf("%q in 1252: %s", s, d.Name)
		}
	}
}

func FuzzDecide(f *testing.F) {
	f.Add([]byte("<meta charset=koi8-r>\xf0\xf2"), "text/html; charset=utf-8")
	f.Fuzz(func(t *testing.T, body []byte, ct string) {
		out, d := Decode(body, ct)
		if d.Name == "" || d.Source == "" {
			t.Fatalf("no decision for %q", body)
		}
		if !utf8Valid(out) {
			t.Fatalf("output not UTF-8")
		}
	})
}

func utf8Valid(b []byte) bool { return strings.ToValidUTF8(string(b), "") == string(b) }
