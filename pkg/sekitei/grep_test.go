package sekitei

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestRegexesWithGrepP checks with PCRE itself (GNU grep -P) that each
// segment regex selects exactly the URLs the tool puts in that segment:
// the subjects of all URLs go in a file, and in segment order grep -P picks
// the lines the regex matches among those no earlier segment took.
func TestRegexesWithGrepP(t *testing.T) {
	grep, err := exec.LookPath("grep")
	if err != nil {
		t.Fatal("grep is needed for this test: ", err)
	}
	probe := exec.Command(grep, "-P", `^a\Ka+$`)
	probe.Stdin = strings.NewReader("aaa\n")
	if out, err := probe.CombinedOutput(); err != nil {
		t.Fatalf("this grep has no working -P (PCRE): %v: %s", err, out)
	}
	cases := map[string][]Example{}
	for _, site := range sites {
		good, general := siteURLs(t, site)
		cases[site] = examples(good, general)
	}
	// A synthetic site with queries, namespaces, non-ASCII paths, ports.
	odd := syntheticSite(3000, 2)
	for i := 0; i < 40; i++ {
		odd = append(odd,
			Example{URL: "http://big.example/ü/" + strconv.Itoa(i), Good: i%3 == 0},
			Example{URL: "http://big.example?x=" + strconv.Itoa(i), Good: false},
			Example{URL: "http://big.example/a+b/(c)/" + strconv.Itoa(i) + ".html", Good: false},
			Example{URL: "http://big.example//double/" + strconv.Itoa(i), Good: false})
	}
	cases["synthetic"] = odd
	for _, site := range []string{"lenta", "wikipedia", "synthetic"} {
		ex := cases[site]
		s, err := Build(site, ex, Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %d segments", site, len(s.Segments))
		if len(s.Segments) < 3 {
			t.Fatalf("%s: only %d segments", site, len(s.Segments))
		}
		// The tool's assignment, by line number of the subjects file.
		want := map[int][]int{}
		var subjects []string
		for i, e := range ex {
			subj, err := Subject(e.URL)
			if err != nil {
				t.Fatal(err)
			}
			subjects = append(subjects, subj)
			seg, err := s.Assign(e.URL)
			if err != nil || seg == nil {
				t.Fatalf("%s: %s not assigned: %v", site, e.URL, err)
			}
			want[seg.ID] = append(want[seg.ID], i+1)
		}
		// left holds "lineno:subject" of the lines no segment took yet.
		left := make([]string, len(subjects))
		for i, s := range subjects {
			left[i] = strconv.Itoa(i+1) + "\t" + s
		}
		file := filepath.Join(t.TempDir(), "subjects.txt")
		for _, seg := range s.Segments {
			if err := os.WriteFile(file, []byte(strings.Join(left, "\n")+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			// The regex is over the subject: strip the line number with \K.
			pcre := `^[0-9]+\t\K(?:` + strings.TrimPrefix(seg.Regex, "^") + `)`
			if seg.Regex == RestRegex {
				pcre = `^[0-9]+\t\K.*$`
			} else if !strings.HasPrefix(seg.Regex, "^") {
				t.Fatalf("%s: segment %d regex %q is not anchored", site, seg.ID, seg.Regex)
			}
			cmd := exec.Command(grep, "-P", "-e", pcre, file)
			cmd.Env = append(os.Environ(), "LC_ALL=C")
			out, err := cmd.Output()
			if err != nil && len(out) != 0 {
				t.Fatalf("grep -P %q: %v", pcre, err)
			}
			var got []int
			taken := map[int]bool{}
			for _, line := range strings.Split(strings.TrimSuffix(string(out), "\n"), "\n") {
				if line == "" {
					continue
				}
				n, _ := strconv.Atoi(line[:strings.IndexByte(line, '\t')])
				got = append(got, n)
				taken[n] = true
			}
			if !equalInts(got, want[seg.ID]) {
				t.Errorf("%s: segment %d %q: grep -P selects %d URLs, the tool %d", site, seg.ID, seg.Regex, len(got), len(want[seg.ID]))
			}
			if len(got) != seg.URLs {
				t.Errorf("%s: segment %d reports %d URLs, grep -P finds %d", site, seg.ID, seg.URLs, len(got))
			}
			rest := left[:0]
			for _, l := range left {
				n, _ := strconv.Atoi(l[:strings.IndexByte(l, '\t')])
				if !taken[n] {
					rest = append(rest, l)
				}
			}
			left = rest
		}
		if len(left) != 0 {
			t.Errorf("%s: %d URLs in no segment, the rest segment should take them all", site, len(left))
		}
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
