package barrel

import (
	"bytes"
	stdzlib "compress/zlib"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zlib"
	"github.com/klauspost/compress/zstd"

	"github.com/sekitei/crawlkit/pkg/barrel/internal/synth"
)

// repoPages returns each record of the index's repository, decoded with
// the named codec's reference decoder (the standard library's RFC 1950
// reader for zlib), by URL.
func repoPages(t *testing.T, dir, codec string) map[string][]byte {
	t.Helper()
	m, err := readManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	err = scanRepo(filepath.Join(dir, repoName), m.Repository, func(r *RepoRecord) error {
		var body []byte
		var err error
		switch codec {
		case CodecZlib:
			zr, zerr := stdzlib.NewReader(bytes.NewReader(r.Page))
			if zerr != nil {
				return fmt.Errorf("%s: %v", r.URL, zerr)
			}
			body, err = io.ReadAll(zr)
		case CodecS2:
			body, err = s2.Decode(nil, r.Page)
		}
		if err != nil {
			return fmt.Errorf("%s: %v", r.URL, err)
		}
		out[r.URL] = body
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestRepositoryCodecs builds the same pages with the S2 repository (the
// default) and with the paper's zlib one: each index records its codec,
// holds pages its codec's reference decoder reads, and answers every query
// alike. A zlib index stays zlib through later batches, refuses a batch
// asking for S2, and becomes S2 when rebuilt.
func TestRepositoryCodecs(t *testing.T) {
	gen := synth.New(60, 400, 3)
	pages := map[string]string{}
	for i := range gen.N {
		pages[gen.URL(i)] = string(gen.Page(i))
	}
	pages["http://ru.test/moscow.html"] = `<html><head><title>Москва</title></head><body><p>Мы живём в Москве, у реки.</p></body></html>`
	queries := append(gen.Queries(30), "москва")
	root := t.TempDir()
	dirS, dirZ := filepath.Join(root, "s2"), filepath.Join(root, "zlib")
	build(t, dirS, Options{}, pages)
	build(t, dirZ, Options{Codec: CodecZlib}, pages)

	idxS, idxZ := open(t, dirS), open(t, dirZ)
	for dir, want := range map[string]string{dirS: CodecS2, dirZ: CodecZlib} {
		m, err := readManifest(dir)
		if err != nil {
			t.Fatal(err)
		}
		if m.RepoCodec != want || m.Format != formatNumber {
			t.Errorf("%s: codec %q format %d, want %q and %d", dir, m.RepoCodec, m.Format, want, formatNumber)
		}
	}
	storedS, storedZ := repoPages(t, dirS, CodecS2), repoPages(t, dirZ, CodecZlib)
	if len(storedS) != len(pages) || len(storedZ) != len(pages) {
		t.Fatalf("%d and %d pages stored, want %d", len(storedS), len(storedZ), len(pages))
	}
	for u, body := range pages {
		if string(storedS[u]) != body || string(storedZ[u]) != body {
			t.Errorf("%s: the stored pages differ from the page added", u)
		}
		d, ok, err := idxS.Lookup(u)
		if err != nil || !ok {
			t.Fatalf("%s: %v %v", u, ok, err)
		}
		if _, got, err := idxS.Page(d); err != nil || string(got) != body {
			t.Errorf("%s: Page of the S2 index: %v", u, err)
		}
		if _, got, err := idxZ.Page(d); err != nil || string(got) != body {
			t.Errorf("%s: Page of the zlib index: %v", u, err)
		}
	}
	want := answers(t, idxS, queries)
	if got := answers(t, idxZ, queries); got != want {
		t.Errorf("the zlib index answers\n%s\nthe S2 one\n%s", got, want)
	}
	if !strings.Contains(want, "moscow.html") {
		t.Errorf("москва does not find the page that says Москве:\n%s", want)
	}
	idxS.Close()
	idxZ.Close()

	// A later batch keeps the index's codec; asking for another is refused.
	more := map[string]string{"http://new.test/x.html": "<html><body><p>" + queries[0] + " in a later batch</p></body></html>"}
	build(t, dirZ, Options{}, more)
	if got := repoPages(t, dirZ, CodecZlib); string(got["http://new.test/x.html"]) != more["http://new.test/x.html"] {
		t.Errorf("the later batch's page is not stored as zlib: %q", got["http://new.test/x.html"])
	}
	b, err := NewBuilder(dirZ, Options{Codec: CodecS2})
	if err == nil {
		b.Close()
		t.Fatal("a batch asking for S2 on a zlib index was accepted")
	}
	if !strings.Contains(err.Error(), "repository is zlib") {
		t.Errorf("refusal: %v", err)
	}

	// Rebuilt, it becomes S2 and answers as before.
	idxZ = open(t, dirZ)
	before := answers(t, idxZ, queries)
	idxZ.Close()
	if _, err := Rebuild(context.Background(), dirZ, Options{}); err != nil {
		t.Fatal(err)
	}
	if m, err := readManifest(dirZ); err != nil || m.RepoCodec != CodecS2 {
		t.Fatalf("rebuilt: %+v %v", m, err)
	}
	if got := repoPages(t, dirZ, CodecS2); len(got) != len(pages)+1 {
		t.Errorf("rebuilt: %d pages stored as S2, want %d", len(got), len(pages)+1)
	}
	if got := answers(t, open(t, dirZ), queries); got != before {
		t.Errorf("rebuilt as S2, the index answers\n%s\nbefore\n%s", got, before)
	}
}

// TestRepositoryCodecRefused: an unknown codec in the manifest, or a
// codec the options do not know, is refused with the manifest's path; a
// damaged S2 page, or one claiming more than a page may hold, is reported
// as corrupt and not allocated.
func TestRepositoryCodecRefused(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "idx")
	build(t, dir, Options{}, site)
	path := filepath.Join(dir, manifestName)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	bad := strings.Replace(string(data), `"repository_codec": "s2"`, `"repository_codec": "lz4"`, 1)
	if bad == string(data) {
		t.Fatalf("no codec in the manifest:\n%s", data)
	}
	if err := os.WriteFile(path, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Open(dir)
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), `"lz4"`) {
		t.Errorf("open with codec lz4: %v", err)
	}
	if _, err := NewBuilder(t.TempDir(), Options{Codec: "bzip2"}); err == nil || !strings.Contains(err.Error(), `"bzip2"`) {
		t.Errorf("a build with codec bzip2: %v", err)
	}

	page := []byte(strings.Repeat("<p>a page of words</p>", 50))
	z := s2.EncodeBetter(nil, page)
	if got, err := inflate(CodecS2, z); err != nil || !bytes.Equal(got, page) {
		t.Fatalf("inflate: %v", err)
	}
	damaged := bytes.Clone(z)
	damaged[len(damaged)/2] ^= 0xff
	damaged = damaged[:len(damaged)-3]
	if _, err := inflate(CodecS2, damaged); !errors.Is(err, ErrCorrupt) {
		t.Errorf("a damaged S2 page: %v", err)
	}
	huge := append([]byte{0x80, 0x80, 0x80, 0x80, 0x08}, z[1:]...) // a length of 2 GiB
	if _, err := inflate(CodecS2, huge); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "more than") {
		t.Errorf("an S2 page claiming 2 GiB: %v", err)
	}
}

// BenchmarkCodecs compresses each page on its own, as the repository
// does, with each codec barrel could use, over the Python docs (Debian's
// python3.11-doc, when installed) and the synthetic pages of the indexing
// benchmark; it reports the ratio and the throughput (docs/barrel.md, The
// repository's codec).
func BenchmarkCodecs(b *testing.B) {
	corpora := map[string][][]byte{}
	filepath.WalkDir("/usr/share/doc/python3.11/html", func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".html") {
			if data, err := os.ReadFile(p); err == nil {
				corpora["pydocs"] = append(corpora["pydocs"], data)
			}
		}
		return nil
	})
	gen := synth.New(20000, 50000, 1)
	for i := range gen.N {
		corpora["synth"] = append(corpora["synth"], gen.Page(i))
	}
	var zb bytes.Buffer
	zw, _ := zlib.NewWriterLevel(&zb, 1)
	enc, _ := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1))
	var dst []byte
	codecs := []struct {
		name string
		fn   func([]byte) int
	}{
		{"zlib-1", func(p []byte) int { zb.Reset(); zw.Reset(&zb); zw.Write(p); zw.Close(); return zb.Len() }},
		{"s2-better", func(p []byte) int { dst = s2.EncodeBetter(dst[:cap(dst)], p); return len(dst) }},
		{"s2", func(p []byte) int { dst = s2.Encode(dst[:cap(dst)], p); return len(dst) }},
		{"zstd-fastest", func(p []byte) int { dst = enc.EncodeAll(p, dst[:0]); return len(dst) }},
	}
	for _, corpus := range []string{"pydocs", "synth"} {
		pages := corpora[corpus]
		var raw int64
		for _, p := range pages {
			raw += int64(len(p))
		}
		for _, c := range codecs {
			b.Run(corpus+"/"+c.name, func(b *testing.B) {
				if len(pages) == 0 {
					b.Skip("no pages: the Python docs are not installed (scripts/deps.sh installs python3.11-doc)")
				}
				b.SetBytes(raw)
				var out int64
				for range b.N {
					out = 0
					for _, p := range pages {
						out += int64(c.fn(p))
					}
				}
				b.ReportMetric(float64(raw)/float64(out), "ratio")
			})
		}
	}
}
