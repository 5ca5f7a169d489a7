package sekitei

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"unicode"
)

func trainSmall(t testing.TB) *Model {
	t.Helper()
	good, general := siteURLs(t, "lenta")
	m, skipped, err := Train(good[:300], general[:300], TrainOptions{Quota: 1000, Stream: 3000, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	if skipped != 0 {
		t.Errorf("skipped %d good URLs", skipped)
	}
	return m
}

func TestModelRoundTrip(t *testing.T) {
	m := trainSmall(t)
	var buf bytes.Buffer
	if _, err := m.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	m2, err := ReadModel(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if m2.Host != "lenta.ru" || m2.Quota != 1000 || m2.Stream != 3000 || m2.TrainedOn.Good != 300 || len(m2.PriorScores) != 300 {
		t.Errorf("read back %+v", m2.TrainedOn)
	}
	var ev Evidence
	for _, u := range []string{"http://lenta.ru/news/2013/09/30/mid/", "http://lenta.ru/russia/2004/06/18/fire1/_Printed.htm"} {
		f, _, _ := ev.Extract(u)
		if a, b := m.Score(f), m2.Score(f); a != b {
			t.Errorf("%s: score %v before writing, %v after", u, a, b)
		}
	}
	// Training is deterministic.
	var again bytes.Buffer
	trainSmall(t).WriteTo(&again)
	if !bytes.Equal(buf.Bytes(), again.Bytes()) {
		t.Error("two trainings on the same data differ")
	}
}

func TestModelLearnsGoodFromGeneral(t *testing.T) {
	m := trainSmall(t)
	good, general := siteURLs(t, "lenta")
	var ev Evidence
	mean := func(urls []string) float64 {
		s := 0.0
		for _, u := range urls {
			f, _, _ := ev.Extract(u)
			s += m.Score(f)
		}
		return s / float64(len(urls))
	}
	// Held-out URLs: good ones score higher on average.
	if g, o := mean(good[1000:1500]), mean(general[1000:1500]); g <= o+1 {
		t.Errorf("held-out mean score: good %.3f, general %.3f", g, o)
	}
}

func TestParseModelRefusesBadFiles(t *testing.T) {
	var buf bytes.Buffer
	trainSmall(t).WriteTo(&buf)
	good := buf.String()
	for _, tc := range []struct {
		name, data, want string
	}{
		{"truncated", good[:len(good)/2], "truncated or corrupt"},
		{"empty", "", "truncated or corrupt"},
		{"other version", strings.Replace(good, `"version": 1`, `"version": 2`, 1), "model version 2"},
		{"other format", strings.Replace(good, ModelFormat, "other", 1), "not a sekitei model"},
		{"not JSON", "hello", "truncated or corrupt"},
		{"no weights", `{"format":"sekitei-model","version":1,"quota":1}`, "no \"weights\""},
		{"negative quota", `{"format":"sekitei-model","version":1,"quota":-1,"weights":{}}`, "negative quota"},
		{"bad weight type", `{"format":"sekitei-model","version":1,"quota":1,"weights":{"a":"x"}}`, "corrupt"},
	} {
		_, err := ParseModel([]byte(tc.data))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want it to say %q", tc.name, err, tc.want)
		}
	}
}

func TestTrainNeedsBothClasses(t *testing.T) {
	if _, _, err := Train(nil, []string{"http://a.org/x"}, TrainOptions{Quota: 1}); err != ErrNoGood {
		t.Errorf("no good: %v", err)
	}
	if _, _, err := Train([]string{"http://a.org/x", "ftp://no"}, []string{"bad"}, TrainOptions{Quota: 1}); err != ErrNoGeneral {
		t.Errorf("no general: %v", err)
	}
	m, skipped, err := Train([]string{"http://a.org/x"}, []string{"http://a.org/y", "nonsense"}, TrainOptions{Quota: 1})
	if err != nil || skipped != 1 || m.Host != "a.org" {
		t.Errorf("tiny training: %v skipped %d", err, skipped)
	}
}

func TestFilterIsOnlineAndKeepsTheQuota(t *testing.T) {
	m := trainSmall(t)
	good, general := siteURLs(t, "lenta")
	var stream []string
	for i := 0; i < 3000; i++ { // interleaved: 1 good in 10
		if i%10 == 0 {
			stream = append(stream, good[1000+i/10])
		} else {
			stream = append(stream, general[5000+i])
		}
	}
	decide := func(urls []string) []bool {
		f := NewFilter(m, 0, 0)
		var out []bool
		for _, u := range urls {
			d, err := f.Decide(u)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, d.Fetch)
		}
		return out
	}
	full := decide(stream)
	prefix := decide(stream[:1234])
	for i := range prefix {
		if prefix[i] != full[i] {
			t.Fatalf("decision %d depends on later URLs", i)
		}
	}
	fetched, goodFetched := 0, 0
	for i, d := range full {
		if d {
			fetched++
			if i%10 == 0 {
				goodFetched++
			}
		}
	}
	if fetched != 1000 {
		t.Errorf("fetched %d, want the quota 1000 used exactly", fetched)
	}
	if goodFetched < 200 { // 300 good offered; fetching blindly would get ~100
		t.Errorf("fetched %d of 300 good URLs", goodFetched)
	}
	// A longer stream than announced: the quota still holds.
	f := NewFilter(m, 0, 100)
	n := 0
	for _, u := range stream {
		if d, _ := f.Decide(u); d.Fetch {
			n++
		}
	}
	if n != 1000 || f.Used() != 1000 || f.Seen() != len(stream) {
		t.Errorf("stream longer than announced: fetched %d", n)
	}
	if _, err := f.Decide("ftp://x/y"); err == nil {
		t.Error("bad URL gives no error")
	}
	// Quota 0 fetches nothing.
	f0 := NewFilter(&Model{Weights: map[string]float64{}}, 0, 10)
	if d, _ := f0.Decide(stream[0]); d.Fetch {
		t.Error("quota 0 fetched")
	}
}

func ExampleFilter() {
	m, _, _ := Train(
		[]string{"http://x.org/news/1", "http://x.org/news/2", "http://x.org/news/3"},
		[]string{"http://x.org/tag/a", "http://x.org/tag/b", "http://x.org/tag/c"},
		TrainOptions{Quota: 2, Stream: 4})
	f := NewFilter(m, 0, 0)
	for _, u := range []string{"http://x.org/tag/d", "http://x.org/news/9", "http://x.org/tag/e", "http://x.org/news/8"} {
		d, _ := f.Decide(u)
		fmt.Println(u, d.Fetch)
	}
	// Output:
	// http://x.org/tag/d false
	// http://x.org/news/9 true
	// http://x.org/tag/e false
	// http://x.org/news/8 true
}

func TestEvidenceHashesMatchStrings(t *testing.T) {
	var a, b Evidence
	for _, u := range []string{"http://ru.wikipedia.org/wiki/%D0%A4%D0%B0%D0%B9%D0%BB:Old_Europe.png",
		"http://lenta.ru/news/2013/09/30/mid/?a=1&b=2", "http://x.org", "http://x.org/Ab-CD_12/x.tar.gz"} {
		fs, _, err := a.Extract(u)
		if err != nil {
			t.Fatal(err)
		}
		hs, _ := b.Hashes(u)
		if len(fs) != len(hs) {
			t.Fatalf("%s: %d features, %d hashes", u, len(fs), len(hs))
		}
		for i := range fs {
			if hashString(fs[i]) != hs[i] {
				t.Errorf("%s: hash of %q differs", u, fs[i])
			}
		}
	}
	fs, _, _ := a.Extract("http://ru.wikipedia.org/wiki/%D0%A4%D0%B0%D0%B9%D0%BB:Old_Europe.png")
	for _, want := range []string{"shape_1:u:Aa_Aa.a", "ns_1:Файл:", "word:europe", "word:файл", "template:/a/u:Aa_Aa.a", "trail:0", "last_lenb:5"} {
		found := false
		for _, f := range fs {
			found = found || f == want
		}
		if !found {
			t.Errorf("feature %q missing from %q", want, fs)
		}
	}
}

func TestFastUnicodeAgreesWithPackageUnicode(t *testing.T) {
	for r := rune(0); r < 0x3000; r++ {
		if isLetterFast(r) != unicode.IsLetter(r) {
			t.Errorf("isLetterFast(%U) = %v", r, isLetterFast(r))
		}
		if toLower(r) != unicode.ToLower(r) {
			t.Errorf("toLower(%U) = %U, want %U", r, toLower(r), unicode.ToLower(r))
		}
	}
}

func TestFilterFetchesAURLOnce(t *testing.T) {
	m := trainSmall(t)
	f := NewFilter(m, 10, 10)
	u := "http://lenta.ru/news/2013/09/30/mid/"
	d1, _ := f.Decide(u)
	d2, _ := f.Decide(u)
	if !d1.Fetch || d2.Fetch || !d2.Duplicate || f.Used() != 1 {
		t.Errorf("first %+v, again %+v, used %d", d1, d2, f.Used())
	}
}
