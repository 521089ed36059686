package main

import (
	"crypto/sha256"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/parleyhq/parley/internal/guardcorpus"
	"github.com/parleyhq/parley/internal/guardlab"
)

func main() {
	dir := flag.String("corpus", "", "the third-party corpus directory (default: PARLEY_GUARD_CORPUS or ../shared/guardcorpus)")
	out := flag.String("out", "", "where to write the model (default: guard/model.bin in the module)")
	flag.Parse()
	if err := run(*dir, *out); err != nil {
		fmt.Fprintln(os.Stderr, "guardtrain:", err)
		os.Exit(1)
	}
}

func run(dir, out string) error {
	root, err := guardcorpus.ModuleRoot(".")
	if err != nil {
		return err
	}
	if dir == "" {
		if dir, err = guardcorpus.FindCorpus(root); err != nil {
			return err
		}
	}
	if out == "" {
		out = filepath.Join(root, "guard", "model.bin")
	}
	samples, err := guardlab.LoadAll(dir, root)
	if err != nil {
		return err
	}
	t0 := time.Now()
	m := guardlab.Train(samples, guardlab.DefaultTrainConfig)
	b := m.Encode()
	if err := os.WriteFile(out, b, 0o644); err != nil {
		return err
	}
	fmt.Printf("trained on %d samples in %v; wrote %s (%d bytes, sha256 %x)\n", len(samples), time.Since(t0).Round(time.Millisecond), out, len(b), sha256.Sum256(b))
	fmt.Printf("thresholds user %+v doc %+v\n", m.User, m.Doc)
	return nil
}
