package parley_test

import (
	"bufio"
	"os"
	"regexp"
	"strings"
	"testing"
)

// programMarker precedes a README code block that is a whole program: the
// file it names, which `go build ./...` and `go vet ./...` compile.
var programMarker = regexp.MustCompile(`^<!-- program: (\S+) -->$`)

// readmeBlock is one fenced block of README.md.
type readmeBlock struct {
	line   int    // of the opening fence
	lang   string // after the fence
	text   string
	marked string // the program marker's path, if one precedes it
}

func readmeBlocks(t *testing.T) []readmeBlock {
	t.Helper()
	f, err := os.Open("README.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []readmeBlock
	var cur *readmeBlock
	marked := ""
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case cur != nil && line == "```":
			out = append(out, *cur)
			cur = nil
		case cur != nil:
			cur.text += line + "\n"
		case strings.HasPrefix(line, "```"):
			cur = &readmeBlock{line: n, lang: strings.TrimPrefix(line, "```"), marked: marked}
			marked = ""
		default:
			if m := programMarker.FindStringSubmatch(line); m != nil {
				marked = m[1]
			} else if strings.TrimSpace(line) != "" {
				marked = ""
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if cur != nil {
		t.Fatalf("README.md:%d: a code block is never closed", cur.line)
	}
	return out
}

// The README's complete programs compile as pasted: each is a copy of a
// file under examples/ that the build compiles, kept identical here, and
// every Go block that is a whole program ("package main") says which.
func TestREADMEProgramsAreTheCompiledExamples(t *testing.T) {
	programs := 0
	for _, b := range readmeBlocks(t) {
		if b.marked == "" {
			if b.lang == "go" && strings.HasPrefix(b.text, "package main") {
				t.Errorf("README.md:%d: a whole program with no <!-- program: examples/.../main.go --> marker before it", b.line)
			}
			continue
		}
		programs++
		if b.lang != "go" {
			t.Errorf("README.md:%d: the program %s is in a %q block, want go", b.line, b.marked, b.lang)
			continue
		}
		if !strings.HasPrefix(b.marked, "examples/") {
			t.Errorf("README.md:%d: the program %s is not under examples/", b.line, b.marked)
		}
		want, err := os.ReadFile(b.marked)
		if err != nil {
			t.Errorf("README.md:%d: %v", b.line, err)
			continue
		}
		if b.text != string(want) {
			t.Errorf("README.md:%d differs from %s: copy the file into the README (or the README into the file)", b.line, b.marked)
		}
	}
	if programs < 2 {
		t.Errorf("%d marked programs in README.md, want the Quickstart and its offline variant", programs)
	}
}
