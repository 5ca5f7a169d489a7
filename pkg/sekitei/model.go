package sekitei

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"sort"
)

// Model file identification. A model of another format or version is
// refused with a clear error rather than misread.
const (
	ModelFormat  = "sekitei-model"
	ModelVersion = 1
)

// A Model decides which URLs of a site to fetch: a logistic regression over
// the Evidence features, trained on good URLs against URLs of unknown value,
// and the site's quota. The filter does not threshold its probability (the
// share of good URLs in a stream is unknown and the training sample is 1:1);
// it ranks: a URL is fetched when its score is in the top share of the
// stream's scores that the remaining quota can pay for (see Filter).
type Model struct {
	Format  string `json:"format"`
	Version int    `json:"version"`
	Host    string `json:"host,omitempty"`
	// Quota is how many URLs of the stream may be fetched.
	Quota int `json:"quota"`
	// Stream is how many URLs the filter expects to be offered; 0 if not
	// known (the filter then assumes 2*Quota).
	Stream int `json:"stream,omitempty"`
	// TrainedOn counts the training URLs.
	TrainedOn struct {
		Good    int `json:"good"`
		General int `json:"general"`
	} `json:"trained_on"`
	Bias    float64            `json:"bias"`
	Weights map[string]float64 `json:"weights"`
	// PriorScores are the out-of-fold scores of the training's general URLs:
	// the expected score distribution of the stream before it is seen.
	PriorScores []float64 `json:"prior_scores"`

	w map[uint64]float64
}

// TrainOptions tune training; zero values mean the defaults.
type TrainOptions struct {
	Quota  int     // required
	Stream int     // expected stream length, 0 if unknown
	Seed   uint64  // shuffling of the SGD passes and the folds
	Epochs int     // passes of AdaGrad (default 10)
	L2     float64 // L2 penalty per update (default 0.01)
}

// ErrNoGood and ErrNoGeneral are returned by Train when a class is empty.
var (
	ErrNoGood    = errors.New("no good URLs to train on")
	ErrNoGeneral = errors.New("no general URLs to train on")
)

type sample struct {
	x []int32
	y float64
}

// Train fits a model on good and general URLs. URLs that are not absolute
// http(s) URLs are skipped and counted in skipped.
func Train(good, general []string, opt TrainOptions) (m *Model, skipped int, err error) {
	if opt.Epochs <= 0 {
		opt.Epochs = 10
	}
	if opt.L2 <= 0 {
		opt.L2 = 1e-2
	}
	var ev Evidence
	vocab := map[string]int32{}
	count := map[string]int{}
	var raw [][]string
	var ys []float64
	host := ""
	hosts := map[string]int{}
	for y, urls := range [][]string{general, good} {
		for _, u := range urls {
			feats, h, err := ev.Extract(u)
			if err != nil {
				skipped++
				continue
			}
			hosts[h]++
			for _, f := range feats {
				count[f]++
			}
			raw = append(raw, feats)
			ys = append(ys, float64(y))
		}
	}
	m = &Model{Format: ModelFormat, Version: ModelVersion, Quota: opt.Quota, Stream: opt.Stream}
	for _, y := range ys {
		if y == 1 {
			m.TrainedOn.Good++
		} else {
			m.TrainedOn.General++
		}
	}
	if m.TrainedOn.Good == 0 {
		return nil, skipped, ErrNoGood
	}
	if m.TrainedOn.General == 0 {
		return nil, skipped, ErrNoGeneral
	}
	best := 0
	for h, n := range hosts {
		if n > best || n == best && h < host {
			host, best = h, n
		}
	}
	m.Host = host
	// Features seen once cannot generalise: they name one training URL,
	// and the stream holds other URLs.
	var names []string
	for f, c := range count {
		if c >= 2 {
			names = append(names, f)
		}
	}
	sort.Strings(names)
	for i, f := range names {
		vocab[f] = int32(i)
	}
	data := make([]sample, len(raw))
	for i, fs := range raw {
		for _, f := range fs {
			if k, ok := vocab[f]; ok {
				data[i].x = append(data[i].x, k)
			}
		}
		data[i].y = ys[i]
	}
	rng := rand.New(rand.NewPCG(opt.Seed, 0x7a1e))
	w, b := fit(data, len(names), opt, rng)
	m.Bias = b
	m.Weights = make(map[string]float64, len(names))
	for i, f := range names {
		if v := round6(w[i]); v != 0 {
			m.Weights[f] = v
		}
	}
	m.Bias = round6(b)
	m.PriorScores = outOfFold(data, len(names), opt, rng)
	m.index()
	return m, skipped, nil
}

func round6(v float64) float64 { return math.Round(v*1e6) / 1e6 }

// fit runs AdaGrad on the logistic loss with L2, classes weighted to balance.
func fit(data []sample, dim int, opt TrainOptions, rng *rand.Rand) ([]float64, float64) {
	w := make([]float64, dim)
	g2 := make([]float64, dim)
	var b, gb2 float64
	pos := 0
	for _, d := range data {
		if d.y == 1 {
			pos++
		}
	}
	neg := len(data) - pos
	wPos, wNeg := 1.0, 1.0
	if pos > 0 && neg > 0 {
		wPos = float64(len(data)) / (2 * float64(pos))
		wNeg = float64(len(data)) / (2 * float64(neg))
	}
	order := make([]int, len(data))
	for i := range order {
		order[i] = i
	}
	const eta = 0.5
	for ep := 0; ep < opt.Epochs; ep++ {
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		for _, i := range order {
			d := data[i]
			z := b
			for _, k := range d.x {
				z += w[k]
			}
			p := 1 / (1 + math.Exp(-z))
			cw := wNeg
			if d.y == 1 {
				cw = wPos
			}
			g := cw * (p - d.y)
			for _, k := range d.x {
				gk := g + opt.L2*w[k]
				g2[k] += gk * gk
				w[k] -= eta * gk / math.Sqrt(g2[k]+1e-8)
			}
			gb2 += g * g
			b -= eta * g / math.Sqrt(gb2+1e-8)
		}
	}
	return w, b
}

// outOfFold scores each general training URL with a model fitted without it
// (5 folds): what the model will make of general URLs it has not seen.
func outOfFold(data []sample, dim int, opt TrainOptions, rng *rand.Rand) []float64 {
	const folds = 5
	fold := make([]int, len(data))
	perm := rng.Perm(len(data))
	for i, p := range perm {
		fold[p] = i % folds
	}
	var scores []float64
	for f := 0; f < folds; f++ {
		var train []sample
		for i, d := range data {
			if fold[i] != f {
				train = append(train, d)
			}
		}
		w, b := fit(train, dim, opt, rng)
		for i, d := range data {
			if fold[i] != f || d.y == 1 {
				continue
			}
			z := b
			for _, k := range d.x {
				z += w[k]
			}
			scores = append(scores, round6(z))
		}
	}
	sort.Float64s(scores)
	return scores
}

func (m *Model) index() {
	m.w = make(map[uint64]float64, len(m.Weights))
	for f, v := range m.Weights {
		m.w[hashString(f)] += v
	}
}

// Score returns the model's log-odds that a URL is good, from its evidence
// features.
func (m *Model) Score(feats []string) float64 {
	z := m.Bias
	for _, f := range feats {
		z += m.w[hashString(f)]
	}
	return z
}

// ScoreHashes is Score on Evidence.Hashes.
func (m *Model) ScoreHashes(hs []uint64) float64 {
	z := m.Bias
	for _, h := range hs {
		z += m.w[h]
	}
	return z
}

func hashBytes(b []byte) uint64 {
	h := uint64(14695981039346656037)
	for _, c := range b {
		h ^= uint64(c)
		h *= 1099511628211
	}
	return h
}

// hashString is FNV-1a 64 without an allocation.
func hashString(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

// Contributions returns the weights of the given features that the model
// knows, for explaining a decision.
func (m *Model) Contributions(feats []string) map[string]float64 {
	out := map[string]float64{}
	for _, f := range feats {
		if v, ok := m.Weights[f]; ok {
			out[f] = v
		}
	}
	return out
}

// WriteTo writes the model as indented JSON.
func (m *Model) WriteTo(w io.Writer) (int64, error) {
	b, err := json.MarshalIndent(m, "", " ")
	if err != nil {
		return 0, err
	}
	b = append(b, '\n')
	n, err := w.Write(b)
	return int64(n), err
}

// ReadModel reads a model file, refusing one that is truncated, of another
// format or version, or inconsistent.
func ReadModel(r io.Reader) (*Model, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	return ParseModel(data)
}

// ParseModel parses a model file's bytes; see ReadModel.
func ParseModel(data []byte) (*Model, error) {
	var head struct {
		Format  string `json:"format"`
		Version int    `json:"version"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, fmt.Errorf("not a sekitei model (truncated or corrupt JSON): %v", err)
	}
	if head.Format != ModelFormat {
		return nil, fmt.Errorf("not a sekitei model: format %q, want %q", head.Format, ModelFormat)
	}
	if head.Version != ModelVersion {
		return nil, fmt.Errorf("model version %d: this sekitei reads version %d; train the model again", head.Version, ModelVersion)
	}
	var m Model
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("corrupt sekitei model: %v", err)
	}
	switch {
	case m.Quota < 0:
		return nil, fmt.Errorf("corrupt sekitei model: negative quota %d", m.Quota)
	case m.Stream < 0:
		return nil, fmt.Errorf("corrupt sekitei model: negative stream %d", m.Stream)
	case m.Weights == nil:
		return nil, errors.New(`corrupt sekitei model: no "weights"`)
	case math.IsNaN(m.Bias) || math.IsInf(m.Bias, 0):
		return nil, errors.New("corrupt sekitei model: bias is not finite")
	}
	for f, v := range m.Weights {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("corrupt sekitei model: weight of %q is not finite", f)
		}
	}
	for _, v := range m.PriorScores {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, errors.New("corrupt sekitei model: a prior score is not finite")
		}
	}
	m.index()
	return &m, nil
}
