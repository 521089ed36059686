package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/parleyhq/parley/guard"
	"github.com/parleyhq/parley/internal/guardcorpus"
	"github.com/parleyhq/parley/internal/guardlab"
	"github.com/parleyhq/parley/internal/guardmodel"
)

func main() {
	dir := flag.String("corpus", "", "the third-party corpus directory (default: PARLEY_GUARD_CORPUS or ../shared/guardcorpus)")
	loso := flag.Bool("loso", false, "also train a model per left-out source and score that source (a few minutes)")
	groups := flag.String("groups", "", "with -loso: leave out only these comma-separated source groups")
	skip := flag.Bool("skip-shipped", false, "do not score the shipped guard and the rules (with -loso)")
	flag.StringVar(&losoFile, "loso-file", "", "with -loso: read the left-out scores from this file if it exists, else write them to it")
	flag.Parse()
	var only []string
	if *groups != "" {
		only = strings.Split(*groups, ",")
	}
	if err := run(*dir, *loso, *skip, only); err != nil {
		fmt.Fprintln(os.Stderr, "guardeval:", err)
		os.Exit(1)
	}
}

// losoFile keeps a leave-one-source-out run's scores (-loso-file).
var losoFile string

func run(dir string, loso, skip bool, only []string) error {
	root, err := guardcorpus.ModuleRoot(".")
	if err != nil {
		return err
	}
	if dir == "" {
		if dir, err = guardcorpus.FindCorpus(root); err != nil {
			return err
		}
	}
	samples, err := guardlab.LoadAll(dir, root)
	if err != nil {
		return err
	}
	ctx := context.Background()
	verdict := func(cfg guard.Config) (guardlab.Verdict, error) {
		g, err := guard.New(cfg)
		if err != nil {
			return nil, err
		}
		return func(s guardcorpus.Sample) bool {
			if s.Document {
				return g.CheckDocument(ctx, s.Text).Injection() >= guard.Medium
			}
			return g.Check(ctx, s.Text).Injection() >= guard.Medium
		}, nil
	}
	shipped, err := verdict(guard.Config{})
	if err != nil {
		return err
	}
	rules, err := verdict(guard.Config{RulesOnly: true})
	if err != nil {
		return err
	}
	if !skip {
		var held []guardcorpus.Sample
		for _, s := range samples {
			if guardlab.Group(s.Source) == guardcorpus.OwnHeldOutSource {
				held = append(held, s)
			}
		}
		guardlab.Evaluate(held, shipped).Print(os.Stdout, "The guard on the project's held-out rows (never trained on; other languages by language)")
		fmt.Println()
		guardlab.Evaluate(held, rules).Print(os.Stdout, "Rules alone on the project's held-out rows")
		fmt.Println()
		guardlab.Evaluate(samples, shipped).Print(os.Stdout, "The guard as shipped, on everything (it was trained on all but the held-out rows: not an estimate)")
		fmt.Println()
		guardlab.Evaluate(samples, rules).Print(os.Stdout, "Rules alone, on everything")
		fmt.Println()
		if out, err := guardlab.OutOfScope(dir); err == nil && len(out) > 0 {
			r := guardlab.Evaluate(out, shipped)
			fmt.Printf("## Out of scope: %d requests for harmful content, not injections (not trained on, not in the figures above)\nflagged by the guard: %.1f%%\n\n", r.Recall.N, r.Recall.Rate())
		}
		printTypos(samples, shipped, rules)
	}
	if !loso {
		return nil
	}
	l, err := leaveOneOut(samples, only, rules)
	if err != nil {
		return err
	}
	fmt.Println()
	l.Report(0, false).Print(os.Stdout, "Leave one source out: a model trained without the source, alone")
	fmt.Println()
	l.Report(0, true).Print(os.Stdout, "Leave one source out: the rules, or a model trained without the source")
	fmt.Println()
	fmt.Println("## Leave one source out: the threshold's trade-off (logit added to Medium)")
	tradeOff(l, func(guardcorpus.Sample) bool { return true })
	fmt.Println()
	fmt.Println("## Leave one source out, text in other languages than English: the threshold's trade-off")
	tradeOff(l, func(s guardcorpus.Sample) bool { return s.Lang != "en" && s.Lang != "und" })
	fmt.Println()
	scopeTrial(l)
	fmt.Println()
	fmt.Println("## Leave one source out: the English threshold and a higher one for text that does not read as English (guardmodel.LooksEnglish)")
	fmt.Printf("%9s %9s %14s %14s %16s %16s\n", "English +", "non-en +", "+rules recall", "+rules FP", "other-lang recall", "other-lang FP")
	english := make([]bool, len(l.Samples))
	for i, s := range l.Samples {
		english[i] = guardmodel.LooksEnglish([]byte(guard.Normalize(s.Text).Text))
	}
	fmt.Println()
	verdictOf(l, func(i int) float32 {
		if !english[i] {
			return shippedOtherLang
		}
		return 0
	}).Print(os.Stdout, "Leave one source out, as shipped: the rules, or a model trained without the source (other languages +1.5)")
	fmt.Println()
	for _, base := range []float32{0, 0.5, 1, 1.5, 2} {
		for _, extra := range []float32{0, 0.5, 1, 1.5, 2, 3} {
			all := verdictOf(l, func(i int) float32 {
				if !english[i] {
					return base + extra
				}
				return base
			})
			other := all.Lang(func(lang string) bool { return lang != "en" && lang != "und" })
			fmt.Printf("%9.1f %9.1f %13.1f%% %13.2f%% %15.1f%% %15.2f%%\n", base, extra, all.Recall.Rate(), all.FalsePos.Rate(), other.Recall.Rate(), other.FalsePos.Rate())
		}
	}
	return nil
}

// shippedOtherLang is how much higher the shipped learned layer's
// threshold is for a window that does not read as English (guard's
// otherLangShift).
const shippedOtherLang = 1.5

func tradeOff(l *guardlab.LOSO, keep func(guardcorpus.Sample) bool) {
	fmt.Printf("%6s %14s %14s %14s %14s\n", "shift", "model recall", "model FP", "+rules recall", "+rules FP")
	sub := l.Subset(keep)
	for _, shift := range []float32{-1, -0.5, 0, 0.5, 1, 1.5, 2, 3, 4} {
		a, c := sub.Report(shift, false), sub.Report(shift, true)
		fmt.Printf("%6.1f %13.1f%% %13.2f%% %13.1f%% %13.2f%%\n", shift, a.Recall.Rate(), a.FalsePos.Rate(), c.Recall.Rate(), c.FalsePos.Rate())
	}
}

// leaveOneOut runs the leave-one-source-out training, or reads its scores
// from losoFile when that exists (writing them there when it does not).
func leaveOneOut(samples []guardcorpus.Sample, only []string, rules guardlab.Verdict) (*guardlab.LOSO, error) {
	if losoFile != "" {
		if b, err := os.ReadFile(losoFile); err == nil {
			// The models' scores are kept; the rules are today's.
			l := &guardlab.LOSO{}
			if err := json.Unmarshal(b, l); err != nil {
				return nil, err
			}
			if l.Shift == 0 {
				return nil, fmt.Errorf("%s: written before the file kept its calibration shift; run again without the file", losoFile)
			}
			l.Reshift(guardlab.DefaultTrainConfig.Shift)
			// The file holds the texts; their labels come from the corpus.
			byKey := make(map[[2]string]guardcorpus.Sample, len(samples))
			for _, s := range samples {
				byKey[[2]string{s.Source, s.Text}] = s
			}
			for i, s := range l.Samples {
				full, ok := byKey[[2]string{s.Source, s.Text}]
				if !ok {
					return nil, fmt.Errorf("%s: a sample is no longer in the corpus; run again without the file", losoFile)
				}
				l.Samples[i], l.Also[i] = full, rules(full)
			}
			return l, nil
		}
	}
	t0 := time.Now()
	l := guardlab.LeaveOneOut(samples, guardlab.DefaultTrainConfig, only, rules, func(g string) {
		fmt.Fprintf(os.Stderr, "leave out %s (%v)\n", g, time.Since(t0).Round(time.Second))
	})
	if losoFile != "" {
		// A text with no features scores -Inf, which JSON cannot hold.
		for i, m := range l.Margin {
			l.Margin[i] = max(-1e9, min(1e9, m))
		}
		b, err := json.Marshal(l)
		if err == nil {
			err = os.WriteFile(losoFile, b, 0o644)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "guardeval: the scores were not kept:", err)
		}
	}
	return l, nil
}

// printTypos scores the English samples with typing errors, as they are
// and with one edit in 15% and 30% of their words of five letters or more.
// The shipped guard was trained on the clean texts, so its figures are not
// estimates for unseen attacks; the drop from the clean row is the point.
func printTypos(samples []guardcorpus.Sample, shipped, rules guardlab.Verdict) {
	fmt.Println("## English text with typing errors (fixed seed; the drop from the clean row)")
	fmt.Printf("%-22s %14s %14s %14s %14s\n", "words with a typo", "recall", "false pos", "rules recall", "rules FP")
	for _, p := range []float64{0, 0.15, 0.3} {
		set := guardlab.WithTypos(samples, p, 20261124)
		a, b := guardlab.Evaluate(set, shipped), guardlab.Evaluate(set, rules)
		fmt.Printf("%-22s %13.1f%% %13.2f%% %13.1f%% %13.2f%%\n", fmt.Sprintf("%.0f%% of 5+ letters", 100*p),
			a.Recall.Rate(), a.FalsePos.Rate(), b.Recall.Rate(), b.FalsePos.Rate())
	}
}
