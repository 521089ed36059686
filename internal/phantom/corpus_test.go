package phantom

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"testing"
)

// line is one labelled text of a corpus in assistant/testdata/phantom.
type line struct {
	Text  string `json:"text"`
	Label string `json:"label"`
	Lang  string `json:"lang"`
	Kind  string `json:"kind"`
}

func readCorpus(t testing.TB, name string) []line {
	t.Helper()
	f, err := os.Open("../../assistant/testdata/phantom/" + name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []line
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var l line
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out = append(out, l)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// score is a confusion count.
type score struct{ tp, fp, fn, tn int }

func (s score) precision() float64 { return ratio(s.tp, s.tp+s.fp) }
func (s score) recall() float64    { return ratio(s.tp, s.tp+s.fn) }

func ratio(a, b int) float64 {
	if b == 0 {
		return 1
	}
	return float64(a) / float64(b)
}

// measure runs Claims over a corpus and returns the scores per language
// ("all" for the whole) and the misclassified lines.
func measure(lines []line) (map[string]*score, []string) {
	scores := map[string]*score{"all": {}}
	var wrong []string
	for _, l := range lines {
		_, got := Claims(l.Text)
		want := l.Label == "claim"
		for _, k := range []string{"all", l.Lang} {
			if scores[k] == nil {
				scores[k] = &score{}
			}
			s := scores[k]
			switch {
			case got && want:
				s.tp++
			case got:
				s.fp++
			case want:
				s.fn++
			default:
				s.tn++
			}
		}
		if got != want {
			wrong = append(wrong, fmt.Sprintf("%s %s/%s: %q", l.Lang, l.Label, l.Kind, l.Text))
		}
	}
	return scores, wrong
}

func report(t *testing.T, name string, scores map[string]*score) {
	langs := make([]string, 0, len(scores))
	for k := range scores {
		langs = append(langs, k)
	}
	slices.Sort(langs)
	for _, k := range langs {
		s := scores[k]
		t.Logf("%s %-3s precision %5.1f%% recall %5.1f%% (tp %d fp %d fn %d tn %d)",
			name, k, 100*s.precision(), 100*s.recall(), s.tp, s.fp, s.fn, s.tn)
	}
}

// holdTo measures the check on corpus file (labelled name in the log) and
// fails below the precision and recall floors. PHANTOM_WRONG=1 logs the
// lines it gets wrong.
func holdTo(t *testing.T, file, name string, precision, recall float64) {
	scores, wrong := measure(readCorpus(t, file))
	report(t, name, scores)
	if os.Getenv("PHANTOM_WRONG") != "" {
		for _, w := range wrong {
			t.Log(w)
		}
	}
	if all := scores["all"]; all.precision() < precision || all.recall() < recall {
		t.Errorf("%s corpus: precision %.3f, recall %.3f; want at least %.2f and %.2f", name, all.precision(), all.recall(), precision, recall)
	}
}

// TestCorpus measures the check on the development corpus, the one its
// rules were written against, and holds it to its figures there.
func TestCorpus(t *testing.T) { holdTo(t, "corpus.jsonl", "dev", 0.95, 0.90) }

// TestHeldout measures the check on a corpus written apart from it, by an
// author who never saw its rules and whose lines were not read while the
// rules were written: the figure to quote. It holds the check to a floor
// well under the measured one, so a change that breaks the check fails
// while small shifts are reported, not failed.
func TestHeldout(t *testing.T) { holdTo(t, "heldout.jsonl", "held-out", 0.85, 0.70) }
