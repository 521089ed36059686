package guard

import (
	"regexp/syntax"
	"strings"
	"testing"

	"github.com/parleyhq/parley/internal/racesplit"
)

// checkParseRule fails t unless parseRule(src) is syntax.Parse(src,
// syntax.Perl): the same tree, or an error for both.
func checkParseRule(t *testing.T, src string) {
	t.Helper()
	got, gotErr := parseRule(src)
	want, wantErr := syntax.Parse(src, syntax.Perl)
	if (gotErr == nil) != (wantErr == nil) {
		t.Fatalf("parseRule(%q): error %v, syntax.Parse: %v", src, gotErr, wantErr)
	}
	if wantErr != nil {
		if gotErr.Error() != wantErr.Error() {
			t.Errorf("parseRule(%q): error %q, syntax.Parse: %q", src, gotErr, wantErr)
		}
		return
	}
	if !got.Equal(want) || got.String() != want.String() {
		t.Errorf("parseRule(%q) =\n%s\nsyntax.Parse =\n%s", src, got, want)
	}
}

// TestParseRuleIsSyntaxParse checks parseRule on every source the built-in
// rules parse, and on the sources where a placeholder cannot stand for the
// class.
func TestParseRuleIsSyntaxParse(t *testing.T) {
	racesplit.Skip(t) // every rule parsed the slow way: 13 s under -race
	for _, sp := range injectionRules {
		for _, bounded := range []bool{false, true} {
			src := ruleSource(sp.lead.source() + sp.re)
			if bounded {
				src = `(?:^|` + reBound + `)(` + src + `)(?:$|` + reBound + `)`
			}
			checkParseRule(t, src)
		}
		checkParseRule(t, ruleSource(sp.re))
	}
	for _, src := range []string{
		reBound,
		reSep + `a` + reGap8 + `b`,
		`(?:a|` + reBound + `)x` + reBound,        // merged into [a...] by the parser
		`(?:x` + reBound + `y|x` + reBound + `z)`, // factored out of the alternation
		`[a` + reBound + `b`,                      // inside a class
		`\` + reBound + `]`,                       // escaped
		`(?i:a` + reBound + `)` + reBound,         // folded
		`(?U)a` + reBound + `(?i)b` + reBound,     // folded later
		"\uf8f0" + reBound,                        // the placeholder's rune, as written
		sepPlaceholder + reBound,                  // the placeholder, as written
		reBound + `(`,                             // an error, quoting the source
		// A placeholder spelled in the source, where one of the
		// separators' is quoted or escaped away (a reviewer's cases).
		`\Q` + reBound + `\E` + sepPlaceholder,
		`\Q` + reBound + `\E(?:\x{F8F0}|\x{F8F2})`,
		`\` + reBound + sepPlaceholder,
		`[a` + reBound + `[\x{f8f2}\x{f8f0}]`,
		`\Q` + reBound + `\E[\x{000F8F0}\x{F8F2}]`,
		// The class spelled another way, where the parser would factor
		// it with a separator (the second reviewer's cases).
		reBound + `x|[^\pN\pL]y`,
		`[^\pN\pL]x|` + reBound + `y`,
		reBound + `x|[^\p{L}\pN]y`,
		reBound + `{2}x|[^\pN\pL]{2}y`,
		`(?:` + reBound + `a|[^\pL\pN\pL]b)`,
		reBound + `\pX`,
	} {
		checkParseRule(t, src)
	}
}

// TestParseRuleSharesTheClass checks that the built-in rules do take the
// placeholder's path: each separator a class of its own, parsed once.
func TestParseRuleSharesTheClass(t *testing.T) {
	src := ruleSource(`ignore~previous instructions`)
	tree, err := parseRule(src)
	if err != nil {
		t.Fatal(err)
	}
	if n := countClass(tree, sepRunes()); n != strings.Count(src, reBound) {
		t.Errorf("%d classes share reBound's runes, want %d", n, strings.Count(src, reBound))
	}
}

// A source over 16 KiB is parsed as written: the parser's limit on class
// runes (32 million, 22,500 separators) must apply to it as to the
// source.
func TestParseRuleParsesALongSourceAsWritten(t *testing.T) {
	racesplit.Skip(t) // 2,000 classes parsed the slow way: 2.4 s under -race
	tree, err := parseRule(strings.Repeat(reBound, 2000))
	if err != nil {
		t.Fatal(err)
	}
	if n := countClass(tree, sepRunes()); n != 0 {
		t.Errorf("%d classes of a 2,000-separator source share reBound's runes, want none", n)
	}
}

func countClass(tree *syntax.Regexp, cls []rune) int {
	n := 0
	if tree.Op == syntax.OpCharClass && len(tree.Rune) > 0 && &tree.Rune[0] == &cls[0] {
		n++
	}
	for _, sub := range tree.Sub {
		n += countClass(sub, cls)
	}
	return n
}

func FuzzParseRule(f *testing.F) {
	for _, s := range []string{reSep, reGap3, `(?:a|` + reBound + `)`, `[` + reBound, `(?i)` + reBound, "\uf8f2" + reBound} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		if len(src) > 1<<10 {
			return
		}
		checkParseRule(t, src)
	})
}
