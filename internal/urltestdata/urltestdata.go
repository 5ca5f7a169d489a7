// Package urltestdata reads the URL Standard's test data
// (testdata/conformance/urltestdata.json, from web-platform-tests, with its
// licence) for the tests of the packages that parse, resolve and key URLs.
package urltestdata

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
)

// A Case is one entry: input, base (nil for none) and either the parsed
// components or Failure.
type Case struct {
	Input    string  `json:"input"`
	Base     *string `json:"base"`
	Href     string  `json:"href"`
	Host     string  `json:"host"`
	Hostname string  `json:"hostname"`
	Port     string  `json:"port"`
	Pathname string  `json:"pathname"`
	Search   string  `json:"search"`
	Hash     string  `json:"hash"`
	Failure  bool    `json:"failure"`
}

// Load returns every case of the file, comments left out.
func Load() ([]Case, error) {
	_, here, _, _ := runtime.Caller(0)
	b, err := os.ReadFile(filepath.Join(filepath.Dir(here), "../../testdata/conformance/urltestdata.json"))
	if err != nil {
		return nil, err
	}
	var raw []json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, err
	}
	var out []Case
	for _, r := range raw {
		if len(r) > 0 && r[0] == '"' {
			continue // a comment
		}
		var c Case
		if err := json.Unmarshal(r, &c); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}
