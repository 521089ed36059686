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
	Recall, FalsePos                           Tally
	BySource, ByFamily, ByLang, FPBy, FPByLang map[string]*Tally
}

// Evaluate runs v over samples.
func Evaluate(samples []guardcorpus.Sample, v Verdict) *Report {
	r := &Report{BySource: map[string]*Tally{}, ByFamily: map[string]*Tally{}, ByLang: map[string]*Tally{}, FPBy: map[string]*Tally{}, FPByLang: map[string]*Tally{}}
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
			get(r.FPByLang, s.Lang).add(hit)
			continue
		}
		r.Recall.add(hit)
		get(r.BySource, s.Source).add(hit)
		get(r.ByFamily, s.Family).add(hit)
		get(r.ByLang, s.Lang).add(hit)
	}
	return r
}

// Lang sums the report's rows of the languages keep accepts: recall and
// false positives over them.
func (r *Report) Lang(keep func(lang string) bool) (out struct{ Recall, FalsePos Tally }) {
	for k, t := range r.ByLang {
		if keep(k) {
			out.Recall.N += t.N
			out.Recall.Hit += t.Hit
		}
	}
	for k, t := range r.FPByLang {
		if keep(k) {
			out.FalsePos.N += t.N
			out.FalsePos.Hit += t.Hit
		}
	}
	return out
}

// Print writes the scorecard as aligned tables.
func (r *Report) Print(w io.Writer, title string) {
	fmt.Fprintf(w, "## %s\n", title)
	fmt.Fprintf(w, "recall %.1f%% of %d attacks; false positives %.2f%% of %d benign\n", r.Recall.Rate(), r.Recall.N, r.FalsePos.Rate(), r.FalsePos.N)
	table(w, "attacks by source", "recall", r.BySource)
	table(w, "attacks by family", "recall", r.ByFamily)
	table(w, "attacks by language", "recall", r.ByLang)
	table(w, "benign by source", "false pos", r.FPBy)
	table(w, "benign by language", "false pos", r.FPByLang)
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

// LOSO is the outcome of a leave-one-source-out run: for every sample of a
// left-out group, its margin over the Medium threshold of its mode under a
// model trained without its group, and the other detector's verdict.
type LOSO struct {
	Samples []guardcorpus.Sample
	Margin  []float32 // score - Medium threshold; >= 0 is flagged
	Also    []bool
	// Shift is the TrainConfig.Shift the thresholds were set with.
	Shift float64
}

// Reshift moves the margins to thresholds set with shift instead: the
// weights do not depend on TrainConfig.Shift, only the thresholds do.
func (l *LOSO) Reshift(shift float64) {
	d := float32(shift - l.Shift)
	for i := range l.Margin {
		l.Margin[i] -= d
	}
	l.Shift = shift
}

// Report is the scorecard when a sample is flagged at margin >= shift,
// or, with also, when the other detector flags it.
func (l *LOSO) Report(shift float32, also bool) *Report {
	k := 0
	return Evaluate(l.Samples, func(guardcorpus.Sample) bool {
		f := l.Margin[k] >= shift || also && l.Also[k]
		k++
		return f
	})
}

// Subset returns the samples keep accepts, with their scores.
func (l *LOSO) Subset(keep func(guardcorpus.Sample) bool) *LOSO {
	out := &LOSO{}
	for i, s := range l.Samples {
		if keep(s) {
			out.Samples = append(out.Samples, s)
			out.Margin = append(out.Margin, l.Margin[i])
			out.Also = append(out.Also, l.Also[i])
		}
	}
	return out
}

// LeaveOneOut trains one model per source group without that group and
// scores the group with it: the honest estimate of how the layer does on
// attacks and prose from a source it never saw. also is the other
// detector (the rules) the model is combined with. A non-empty only
// limits the groups left out.
func LeaveOneOut(samples []guardcorpus.Sample, cfg TrainConfig, only []string, also Verdict, progress func(group string)) *LOSO {
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
	feats := Featurize(samples)
	out := &LOSO{Shift: cfg.Shift}
	var sc guardmodel.Scratch
	for _, g := range keys {
		if progress != nil {
			progress(g)
		}
		m := feats.Train(cfg, g)
		for _, s := range samples {
			if Group(s.Source) != g {
				continue
			}
			z, _, _ := m.Score([]byte(guard.Normalize(s.Text).Text), &sc)
			t := m.User.Medium
			if s.Document {
				t = m.Doc.Medium
			}
			out.Samples = append(out.Samples, s)
			out.Margin = append(out.Margin, z-t)
			out.Also = append(out.Also, also(s))
		}
	}
	return out
}
