package recrawl

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// State is what rank keeps between runs: the global multiplier (smoothed
// from run to run, as the article keeps lambda_0 nearly constant), each
// host's last lambda_i, and the fractions of a crawl each limit left over,
// so that a host allowed 6 crawls a day gets one every fourth hourly slot.
type State struct {
	Updated     time.Time            `json:"updated"`
	Lambda0     float64              `json:"lambda0"`
	GlobalCarry float64              `json:"global_carry"`
	Hosts       map[string]HostState `json:"hosts"`
}

// HostState is one host's part of the state.
type HostState struct {
	Lambda float64 `json:"lambda"`          // lambda_i of the last slot
	Static float64 `json:"static_lambda"`   // lambda_i of the static optimum
	Carry  float64 `json:"carry,omitempty"` // crawl fraction left over
}

// LoadState reads a state file; a missing file is an empty state.
func LoadState(name string) (*State, error) {
	st := &State{Hosts: map[string]HostState{}}
	b, err := os.ReadFile(name)
	if errors.Is(err, fs.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, st); err != nil {
		return nil, fmt.Errorf("state file %s: %v", name, err)
	}
	if st.Hosts == nil {
		st.Hosts = map[string]HostState{}
	}
	return st, nil
}

// Save writes the state atomically (a temporary file renamed over it), so
// that a crash never leaves half a state file.
func (st *State) Save(name string) error {
	b, err := json.MarshalIndent(st, "", " ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(name), ".recrawl-state-*")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), name)
}
