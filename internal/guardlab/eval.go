package guardlab

import (
	"fmt"
	"io"
	"slices"
)

// Verdict says whether a detector flags a sample.
type Verdict func(Sample) bool

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
func Evaluate(samples []Sample, v Verdict) *Report {
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
