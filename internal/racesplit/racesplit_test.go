package racesplit_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/parleyhq/parley/internal/racesplit"
)

// Every package whose tests call racesplit.Skip is in Packages, and
// .ci/run's pass without -race runs exactly Packages: a suite moved out
// of the -race pass is never left out of both.
func TestCIRunsTheSplitPackages(t *testing.T) {
	var callers []string
	err := filepath.WalkDir("../..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".") && path != "../..") {
			return filepath.SkipDir
		}
		if !strings.HasSuffix(path, "_test.go") || strings.HasPrefix(path, "../../internal/racesplit/") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if strings.Contains(string(src), "racesplit.Skip(") {
			pkg := "./" + filepath.ToSlash(strings.TrimPrefix(filepath.Dir(path), "../../"))
			if !slices.Contains(callers, pkg) {
				callers = append(callers, pkg)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(callers)
	if !slices.Equal(callers, racesplit.Packages) {
		t.Errorf("packages with tests calling racesplit.Skip: %v; Packages: %v", callers, racesplit.Packages)
	}
	run, err := os.ReadFile("../../.ci/run")
	if err != nil {
		t.Fatal(err)
	}
	line := ""
	for l := range strings.Lines(string(run)) {
		if strings.Contains(l, "go test") && !strings.Contains(l, "-race") && !strings.HasPrefix(strings.TrimSpace(l), "#") {
			line = l
		}
	}
	var got []string
	for _, f := range strings.Fields(line) {
		if strings.HasPrefix(f, "./") {
			got = append(got, f)
		}
	}
	slices.Sort(got)
	if !slices.Equal(got, racesplit.Packages) {
		t.Errorf(".ci/run's pass without -race runs %v, want %v (line %q)", got, racesplit.Packages, strings.TrimSpace(line))
	}
}
