// Command guardeval measures the guard on the third-party corpus of
// ../shared/guardcorpus and the project's own corpus: recall per source,
// family and language, false positives per benign source, for the rules
// alone and for the whole guard, and, with -loso, leave-one-source-out
// figures of the learned layer (train without a source, test on it), the
// honest estimate of how it does on attacks nobody here wrote.
//
//	go run ./internal/cmd/guardeval [-loso] [-corpus dir]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/parleyhq/parley/guard"
	"github.com/parleyhq/parley/internal/guardlab"
)

func main() {
	dir := flag.String("corpus", "", "the guard corpus directory (default: PARLEY_GUARD_CORPUS or ../shared/guardcorpus)")
	flag.Parse()
	if err := run(*dir); err != nil {
		fmt.Fprintln(os.Stderr, "guardeval:", err)
		os.Exit(1)
	}
}

func run(dir string) error {
	var err error
	if dir == "" {
		if dir, err = guardlab.FindCorpus("."); err != nil {
			return err
		}
	}
	third, err := guardlab.LoadCorpus(dir)
	if err != nil {
		return err
	}
	g, err := guard.New(guard.Config{})
	if err != nil {
		return err
	}
	ctx := context.Background()
	user := func(s guardlab.Sample) bool { return g.Check(ctx, s.Text).Injection() >= guard.Medium }
	guardlab.Evaluate(third, user).Print(os.Stdout, "Check, every sample as a user message (Injection() >= Medium)")
	return nil
}
