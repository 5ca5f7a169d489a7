package textsig

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"
)

// refSimHash is Charikar's definition written out slowly: each feature is a
// vector of +1 (bit set) and -1 (bit clear) read from its binary string,
// the vectors are summed, and the sign of each sum gives a bit.
func refSimHash(features []uint64) uint64 {
	var sum [64]float64
	for _, f := range features {
		s := fmt.Sprintf("%064b", f) // most significant bit first
		for i := 0; i < 64; i++ {
			if s[63-i] == '1' {
				sum[i]++
			} else {
				sum[i]--
			}
		}
	}
	var out uint64
	for i := 0; i < 64; i++ {
		if sum[i] > 0 {
			out += 1 << uint(i)
		}
	}
	return out
}

func TestSimHashAgreesWithReference(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for n := 0; n < 300; n++ {
		fs := make([]uint64, r.IntN(50))
		for i := range fs {
			fs[i] = r.Uint64()
			if r.IntN(4) == 0 && i > 0 {
				fs[i] = fs[i-1] // repeated features weigh more
			}
		}
		if got, want := SimHash(fs), refSimHash(fs); got != want {
			t.Fatalf("features %x: %016x, reference %016x", fs, got, want)
		}
	}
	if SimHash(nil) != 0 {
		t.Error("no features: not 0")
	}
}

const article = `Городской совет утвердил план реконструкции набережной. Работы начнутся весной
и продлятся два года; подрядчика выберут на открытом конкурсе. Жители смогут обсудить проект на
публичных слушаниях, а архитекторы обещают сохранить старые липы вдоль реки.`

const article2 = `The committee rejected the proposal after a long debate about costs. Members said
the bridge repair should wait until the next budget, while engineers warned that the delay would
make the final bill much higher for the town.`

func site(clock, counter, banner, body string) []byte {
	return []byte(`<html><head><title>Новости</title><script>var t = "` + clock + `";</script></head><body>
<header><a href="/">Главная</a> <a href="/news">Новости</a></header>
<nav><ul><li><a href="/a">Политика</a></li><li><a href="/b">Экономика</a></li></ul></nav>
<div class="clock">Сейчас ` + clock + `</div>
<aside><a href="/promo">` + banner + `</a></aside>
<div class="related"><a href="/r1">Читайте также: погода</a> <a href="/r2">Курсы валют</a></div>
<article><h1>План набережной</h1><p>` + body + `</p></article>
<footer>Посетителей сегодня: ` + counter + ` © 2026</footer></body></html>`)
}

func TestMeaningfulChange(t *testing.T) {
	base := Signature(site("12:00, 21 ноября 2026", "1041", "Скидки на шины!", article))
	same := Signature(site("12:05, 22 ноября 2026", "1093", "Новый автомобиль за рубль", article))
	if d := Distance(base, same); d != 0 {
		t.Errorf("clock, counter and banner changed: distance %d, want 0", d)
	}
	edited := Signature(site("12:00, 21 ноября 2026", "1041", "Скидки на шины!", strings.Replace(article,
		"Жители смогут обсудить проект на\nпубличных слушаниях", "Проект уже одобрен, слушаний не будет", 1)))
	if !Changed(base, edited, DefaultThreshold) {
		t.Errorf("a sentence rewritten: distance %d, not a change", Distance(base, edited))
	}
	other := Signature(site("12:00", "1", "x", article2))
	if d := Distance(base, other); d < 16 {
		t.Errorf("another article: distance %d, want at least 16", d)
	}
	if base == 0 {
		t.Error("no signature for a page with text")
	}
}

func TestMainText(t *testing.T) {
	got := MainText(site("12:00", "7", "banner", article))
	if !strings.Contains(got, "Городской совет") || !strings.Contains(got, "План набережной") {
		t.Errorf("main text lost: %q", got)
	}
	for _, bad := range []string{"Политика", "banner", "Читайте", "Посетителей", "var t"} {
		if strings.Contains(got, bad) {
			t.Errorf("boilerplate %q kept: %q", bad, got)
		}
	}
}

func TestWords(t *testing.T) {
	got := strings.Join(Words("Updated 21 November 2026, 12:05 — it's 3x faster; Мая 9 года"), " ")
	if want := "updated it's faster года"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// The written-out FNV-1a agrees with hash/fnv.
func TestHash(t *testing.T) {
	for _, p := range [][2]string{{"", ""}, {"новости", "дня"}, {"a", "b"}} {
		h := fnv.New64a()
		h.Write([]byte(p[0] + "\x00" + p[1]))
		if got := hash(p[0], p[1]); got != h.Sum64() {
			t.Errorf("%q: %x, hash/fnv %x", p, got, h.Sum64())
		}
	}
}

func TestLower(t *testing.T) {
	for _, r := range "AZaz09ÀÉАЯЁЀЏабяёÄΣ" {
		if got, want := lower(r), unicode.ToLower(r); got != want {
			t.Errorf("%c: %c, want %c", r, got, want)
		}
	}
}

func TestHex(t *testing.T) {
	for _, s := range []uint64{0, 1, 0xdeadbeef, 1<<64 - 1} {
		h := Hex(s)
		back, err := ParseHex(h)
		if len(h) != 16 || h != strings.ToLower(h) || err != nil || back != s {
			t.Errorf("%x: %q %x %v", s, h, back, err)
		}
	}
}

func BenchmarkSignature(b *testing.B) {
	page := site("12:00", "7", "banner", strings.Repeat(article+" ", 20))
	b.SetBytes(int64(len(page)))
	for i := 0; i < b.N; i++ {
		Signature(page)
	}
}

func BenchmarkSimHashVsReference(b *testing.B) {
	fs := Features(Words(strings.Repeat(article+" ", 20)))
	b.Run("fast", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			SimHash(fs)
		}
	})
	b.Run("reference", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			refSimHash(fs)
		}
	})
}

// reference is the signature as the package defines it, step by step.
func reference(page []byte) uint64 {
	if len(page) > MaxPage {
		page = page[:MaxPage]
	}
	text := MainText(page)
	kept := 0
	for i := 0; i < len(text); i++ {
		if text[i] == '\n' {
			if kept = i + 1; kept >= MaxText {
				break
			}
		}
	}
	return SimHash(Features(Words(text[:kept])))
}

var signerPages = []string{
	"", "one", "<p>Word</p>", "<p>'’don’t' stop 12 me</p>", "<p>a</p><p>b</p>",
	`<div><a href=x>link text that is long</a> short</div><div>main text here <a href=y>l</a></div>`,
	"<nav>menu</nav><article><h1>Title</h1><p>Body&amp;soul &nbsp; text\u00a0with\u2003spaces, Январь ПРИВЕТ мир</p></article>",
	"<p>bad \xff\xfe utf8 word\xc3</p><script>var a = '<p>x</p>'</script><style>p{}</style><noscript><div>ns</div></noscript>after",
	"<title>T</title><textarea>no</textarea><p>Monday 5pm TODAY the World</p><br/><hr>x<a>y</a>",
}

func TestSignerAgreesWithDefinition(t *testing.T) {
	pages := append([]string{}, signerPages...)
	pages = append(pages, string(site("12:00, 21 ноября 2026", "1041", "Скидки на шины!", article)))
	// Every calendar word, between words that are not, each a page of its
	// own so that one word dropped or kept moves the signature.
	for w := range calendar {
		pages = append(pages, "<p>the "+strings.ToUpper(w[:1])+w[1:]+" report of the day</p>")
	}
	for _, p := range pages {
		if got, want := Signature([]byte(p)), reference([]byte(p)); got != want {
			t.Errorf("Signature(%q) = %016x, want %016x", p, got, want)
		}
	}
	// The Python documentation, when installed (scripts/deps.sh installs it).
	n := 0
	filepath.WalkDir("/usr/share/doc/python3.11/html", func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Ext(p) != ".html" || n >= 100 {
			return nil
		}
		body, err := os.ReadFile(p)
		if err != nil {
			return nil
		}
		n++
		if got, want := Signature(body), reference(body); got != want {
			t.Errorf("%s: Signature %016x, want %016x", p, got, want)
		}
		return nil
	})
}

func FuzzSigner(f *testing.F) {
	for _, p := range signerPages {
		f.Add([]byte(p))
	}
	f.Fuzz(func(t *testing.T, page []byte) {
		if got, want := Signature(page), reference(page); got != want {
			t.Fatalf("Signature(%q) = %016x, want %016x", page, got, want)
		}
	})
}
