package sekitei

import (
	"bufio"
	"os"
	"testing"
)

const dataDir = "../../testdata/sekitei/"

var sites = []string{"lenta", "wikipedia"}

func readLines(t testing.TB, name string) []string {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// siteURLs returns a bundled site's good and general URLs.
func siteURLs(t testing.TB, site string) (good, general []string) {
	return readLines(t, dataDir+"urls."+site+".examined"), readLines(t, dataDir+"urls."+site+".general")
}

func examples(good, general []string) []Example {
	var ex []Example
	for _, u := range good {
		ex = append(ex, Example{URL: u, Good: true})
	}
	for _, u := range general {
		ex = append(ex, Example{URL: u, Good: false})
	}
	return ex
}
