// Package guardlab trains and measures the guard's learned layer: it trains
// the linear model of internal/guardmodel on the samples of
// internal/guardcorpus and scores detectors per source, family and
// language, including leave-one-source-out runs. The guardtrain and
// guardeval commands use it.
package guardlab

import (
	"fmt"
	"github.com/parleyhq/parley/guard"
	"github.com/parleyhq/parley/internal/guardcorpus"
	"github.com/parleyhq/parley/internal/guardmodel"
	"io"
	"slices"
)

// Verdict says whether a detector flags a sample.
type Verdict func(guardcorpus.Sample) bool

// Tally is a count of flagged samples.
type Tally struct{ N, Hit int }

// Rate is Hit/N in percent.
func (t Tally) Rate() float64 {
	if t.N == 0 {
		return 0
	}
	return 100 * float64(t.Hit) / float64(t.N)
}

func (t *Tally) add(hit bool) {
	t.N++
	if hit {
		t.Hit++
	}
}

// Report is a detector's scorecard: recall on attacks and false positives on
// benign samples, overall and by source, family and language.
type Report struct {
	Recall, FalsePos                 Tally
	BySource, ByFamily, ByLang, FPBy map[string]*Tally
}

// Evaluate runs v over samples.
func Evaluate(samples []guardcorpus.Sample, v Verdict) *Report {
	r := &Report{BySource: map[string]*Tally{}, ByFamily: map[string]*Tally{}, ByLang: map[string]*Tally{}, FPBy: map[string]*Tally{}}
	get := func(m map[string]*Tally, k string) *Tally {
		t := m[k]
		if t == nil {
			t = &Tally{}
			m[k] = t
		}
		return t
	}
	for _, s := range samples {
		hit := v(s)
		if !s.Attack {
			r.FalsePos.add(hit)
			get(r.FPBy, s.Source).add(hit)
			continue
		}
		r.Recall.add(hit)
		get(r.BySource, s.Source).add(hit)
		get(r.ByFamily, s.Family).add(hit)
		get(r.ByLang, s.Lang).add(hit)
	}
	return r
}

// Print writes the scorecard as aligned tables.
func (r *Report) Print(w io.Writer, title string) {
	fmt.Fprintf(w, "## %s\n", title)
	fmt.Fprintf(w, "recall %.1f%% of %d attacks; false positives %.2f%% of %d benign\n", r.Recall.Rate(), r.Recall.N, r.FalsePos.Rate(), r.FalsePos.N)
	table(w, "attacks by source", "recall", r.BySource)
	table(w, "attacks by family", "recall", r.ByFamily)
	table(w, "attacks by language", "recall", r.ByLang)
	table(w, "benign by source", "false pos", r.FPBy)
}

func table(w io.Writer, head, col string, m map[string]*Tally) {
	if len(m) == 0 {
		return
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	fmt.Fprintf(w, "\n%-40s %6s %9s\n", head, "n", col)
	for _, k := range keys {
		fmt.Fprintf(w, "%-40s %6d %8.1f%%\n", k, m[k].N, m[k].Rate())
	}
}

// ModelVerdict flags a sample whose best window reaches the model's Medium
// threshold for its mode (document or user message).
func ModelVerdict(m *guardmodel.Model) Verdict {
	var sc guardmodel.Scratch
	return func(s guardcorpus.Sample) bool {
		z, _, _ := m.Score([]byte(guard.Normalize(s.Text).Text), &sc)
		if s.Document {
			return z >= m.Doc.Medium
		}
		return z >= m.User.Medium
	}
}

// LeaveOneOut trains one model per source group without that group and
// scores the group with it: the honest estimate of how the layer does on
// attacks and prose from a source it never saw. It returns the model's
// scorecard alone and together with also (the rules, say): a sample then
// counts as flagged when either flags it. A non-empty only limits the
// groups left out.
func LeaveOneOut(samples []guardcorpus.Sample, cfg TrainConfig, only []string, also Verdict, progress func(group string)) (alone, combined *Report) {
	groups := map[string]bool{}
	for _, s := range samples {
		if g := Group(s.Source); g != guardcorpus.OwnHeldOutSource && (len(only) == 0 || slices.Contains(only, g)) {
			groups[g] = true
		}
	}
	keys := make([]string, 0, len(groups))
	for g := range groups {
		keys = append(keys, g)
	}
	slices.Sort(keys)
	var held []guardcorpus.Sample
	verdicts := map[int][2]bool{}
	feats := Featurize(samples)
	for _, g := range keys {
		if progress != nil {
			progress(g)
		}
		var test []int
		for i, s := range samples {
			if Group(s.Source) == g {
				test = append(test, i)
			}
		}
		v := ModelVerdict(feats.Train(cfg, g))
		for _, i := range test {
			m := v(samples[i])
			verdicts[i] = [2]bool{m, m || also(samples[i])}
		}
	}
	for i := range samples {
		if _, ok := verdicts[i]; ok {
			held = append(held, samples[i])
		}
	}
	// Evaluate calls the verdict once per sample, in order.
	var flags [][2]bool
	for i := range samples {
		if f, ok := verdicts[i]; ok {
			flags = append(flags, f)
		}
	}
	report := func(j int) *Report {
		k := 0
		return Evaluate(held, func(guardcorpus.Sample) bool { f := flags[k][j]; k++; return f })
	}
	return report(0), report(1)
}
