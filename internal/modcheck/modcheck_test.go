package modcheck

import (
	"os/exec"
	"strings"
	"testing"
)

// The toolkit's module graph has no search engine: bleve is a benchmark
// peer only, in the module pkg/barrel/blevebench.
func TestModuleGraphHasNoBleve(t *testing.T) {
	out, err := exec.Command("go", "list", "-m", "all").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -m all: %v\n%s", err, out)
	}
	mods := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(mods) < 5 || !strings.HasPrefix(mods[0], "github.com/sekitei/crawlkit") {
		t.Fatalf("unexpected module list:\n%s", out)
	}
	for _, m := range mods {
		if strings.Contains(m, "blevesearch") {
			t.Errorf("the module requires %s", m)
		}
	}
}
