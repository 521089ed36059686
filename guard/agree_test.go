package guard

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/parleyhq/parley/internal/guardcorpus"
	"github.com/parleyhq/parley/internal/racesplit"
	"github.com/parleyhq/parley/internal/testnote"
)

// corpusTexts is every text of the project's corpus and, when it is on
// disk, of the third-party corpus (attacks and benign).
func corpusTexts(tb testing.TB) []string {
	tb.Helper()
	own, err := guardcorpus.OwnFrom(".")
	if err != nil {
		tb.Fatal(err)
	}
	var out []string
	for _, s := range own {
		out = append(out, s.Text)
	}
	if dir, err := guardcorpus.FindCorpus("."); err == nil {
		third, err := guardcorpus.LoadCorpus(dir)
		if err != nil {
			tb.Fatal(err)
		}
		for _, s := range third {
			out = append(out, s.Text)
		}
	} else {
		testnote.Note(tb, "third-party guard corpus", err.Error())
	}
	return out
}

// benignCorpusTexts is the benign prose of the third-party corpus, or a
// skip.
func benignCorpusTexts(tb testing.TB) []string {
	tb.Helper()
	texts, err := guardcorpus.BenignTexts(".")
	if errors.Is(err, guardcorpus.ErrNoCorpus) {
		testnote.Skip(tb, "guard corpus checks", err.Error())
	}
	if err != nil {
		tb.Fatal(err)
	}
	return texts
}

// agreeSeeds are inputs for the fuzz targets that compare a fast path with
// its reference: NUL bytes, invalid UTF-8, combining marks, tag characters,
// bidi controls, fullwidth letters, digits touching letters, encodings and
// PII.
var agreeSeeds = append(slices.Clone(fuzzSeeds),
	"a\x00b\x00\x00 c", "\x00", "abc\xffdef\xc3", "\xe2\x80", "e\u0301 x\u0301\u0302y", "a\u0301",
	"A\u030a\u0323b", "\U000E0041\U000E0042 x \U0001F3F4\U000E0067\U000E007F", "x\u202Dy\u2066z\u2069",
	"ＨＥＬＬＯ ｗｏｒｌｄ １２３", "p4ssw0rd h3ll0 2024 a1 1a", "r00t @dmin pa$$ !x! a|b a+b",
	"  \t\n\r lead and trail \v\f ", "x\u00a0\u00a0y\u2028z\u3000w", "Straße ẞ ﬁ ﬀ", "ᄀ각\u1161 한국어",
	"\u0301\u0301 start with marks", "a"+string(make([]byte, 40))+"b", "e"+repeatString("\u0301", 40)+"x",
	"Ｉｇｎｏｒｅ\u200b all", "dXNlcm5hbWU6cGFzc3dvcmQ= 0x41424344454647484950 %41%42%43%44%45",
	"jane.doe@example.com +44 20 7946 0958 4111 1111 1111 1111 DE89 3704 0044 0532 0130 00",
	"AKIAIOSFODNN7EXAMPLE ghp_0123456789abcdefghijABCDEFGHIJ012345 sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123",
	"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.abc password=Xk9#mQ2!vL7pR4 123-45-6789 (555) 123-4567",
)

func repeatString(s string, n int) string {
	var b bytes.Buffer
	for range n {
		b.WriteString(s)
	}
	return b.String()
}

// checkNormalizeAgrees fails t when the normalizer's views of s differ
// from the reference's.
func checkNormalizeAgrees(t *testing.T, n *normalizer, ref *refNormalizer, s string) {
	t.Helper()
	n.normalize(s)
	ref.normalize(s)
	eq := func(name string, a, b view) {
		t.Helper()
		if !bytes.Equal(a.b, b.b) || !slices.Equal(a.start, b.start) || !slices.Equal(a.end, b.end) {
			t.Fatalf("%s view differs for %q:\n got %q %v %v\nwant %q %v %v", name, s, a.b, a.start, a.end, b.b, b.start, b.end)
		}
	}
	eq("main", n.main, ref.main)
	eq("compact", n.compact.view(), ref.compact)
	if !bytes.Equal(n.leet, ref.leet) || n.leetOK != ref.leetOK {
		t.Fatalf("leet view differs for %q:\n got %q %v\nwant %q %v", s, n.leet, n.leetOK, ref.leet, ref.leetOK)
	}
	if !slices.Equal(n.bidi, ref.bidi) {
		t.Fatalf("bidi differs for %q: got %v, want %v", s, n.bidi, ref.bidi)
	}
	if !slices.EqualFunc(n.tags, ref.tags, func(a, b tagRun) bool {
		return a.start == b.start && a.end == b.end && a.flag == b.flag && bytes.Equal(a.text, b.text)
	}) {
		t.Fatalf("tags differ for %q: got %v, want %v", s, n.tags, ref.tags)
	}
}

// view expands v to a view with a start and end per byte.
func (v *compactView) view() view {
	out := view{b: v.b, start: []int32{}, end: []int32{}}
	for _, k := range v.idx {
		out.start = append(out.start, v.start[k])
		out.end = append(out.end, v.end[k])
	}
	return out
}

// TestNormalizeAgreesOnCorpus: the normalizer gives the reference's views
// on every corpus text, with reused buffers as in the guard's pool.
func TestNormalizeAgreesOnCorpus(t *testing.T) {
	racesplit.Skip(t) // no concurrency of its own; slow under -race
	var n normalizer
	var ref refNormalizer
	for _, s := range append(corpusTexts(t), agreeSeeds...) {
		checkNormalizeAgrees(t, &n, &ref, s)
	}
}

// FuzzNormalizeAgrees: the normalizer gives the reference's views on any
// input.
func FuzzNormalizeAgrees(f *testing.F) {
	for _, s := range agreeSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var n normalizer
		var ref refNormalizer
		checkNormalizeAgrees(t, &n, &ref, s)
		// Again with buffers left from a different text.
		n.normalize("warm 1gn0re \u00e9")
		checkNormalizeAgrees(t, &n, &ref, s)
	})
}

// BenchmarkNormalizeBenignCorpus normalizes the benign corpus once per op.
func BenchmarkNormalizeBenignCorpus(b *testing.B) {
	texts := benignCorpusTexts(b)
	var n normalizer
	benchEach(b, texts, func(s string) { n.normalize(s) })
}

// BenchmarkNormalizeRefBenignCorpus is the same for the reference.
func BenchmarkNormalizeRefBenignCorpus(b *testing.B) {
	texts := benignCorpusTexts(b)
	var n refNormalizer
	benchEach(b, texts, func(s string) { n.normalize(s) })
}

// BenchmarkFindEncodedRunsBenignCorpus walks the benign corpus for encoded
// runs once per op.
func BenchmarkFindEncodedRunsBenignCorpus(b *testing.B) {
	texts := benignCorpusTexts(b)
	runs := 0
	benchEach(b, texts, func(s string) { findEncodedRuns(s, func(encodedRun) { runs++ }) })
}

// BenchmarkPIIScanBenignCorpus scans the benign corpus for PII once per op.
func BenchmarkPIIScanBenignCorpus(b *testing.B) {
	texts := benignCorpusTexts(b)
	p := newPIIScanner()
	var out []rawFinding
	benchEach(b, texts, func(s string) { out = p.scan(s, out[:0]) })
}

func benchEach(b *testing.B, texts []string, fn func(string)) {
	total := 0
	for _, s := range texts {
		total += len(s)
		fn(s)
	}
	b.SetBytes(int64(total))
	b.ReportAllocs()
	for b.Loop() {
		for _, s := range texts {
			fn(s)
		}
	}
}

// TestPIIKeywordsNotNested pins what the PII scan's keyword filter relies
// on: no keyword is a substring of another, ignoring ASCII case, so that
// finding them by their start gives the order of their ends.
func TestPIIKeywordsNotNested(t *testing.T) {
	for i, a := range piiKeywords {
		for j, b := range piiKeywords {
			if i != j && strings.Contains(a.kw, b.kw) {
				t.Errorf("keyword %q contains keyword %q", a.kw, b.kw)
			}
		}
		if a.kw != strings.ToLower(a.kw) {
			t.Errorf("keyword %q is not lower case", a.kw)
		}
	}
}

func checkPIIAgrees(t *testing.T, p *piiScanner, kw *matcher, s string) {
	t.Helper()
	got := p.scan(s, nil)
	want := refPIIScan(p, kw, s, nil)
	if !slices.Equal(got, want) {
		t.Fatalf("PII findings differ for %q:\n got %+v\nwant %+v", s, got, want)
	}
}

// TestPIIScanAgreesOnCorpus: the PII scan gives the reference's findings
// on every corpus text.
func TestPIIScanAgreesOnCorpus(t *testing.T) {
	racesplit.Skip(t) // no concurrency of its own; slow under -race
	p, kw := newPIIScanner(), newPIIKeywordMatcher()
	for _, s := range append(corpusTexts(t), agreeSeeds...) {
		checkPIIAgrees(t, p, kw, s)
	}
}

// FuzzPIIScanAgrees: the PII scan gives the reference's findings on any
// input.
func FuzzPIIScanAgrees(f *testing.F) {
	for _, s := range agreeSeeds {
		f.Add(s)
	}
	p, kw := newPIIScanner(), newPIIKeywordMatcher()
	f.Fuzz(func(t *testing.T, s string) {
		checkPIIAgrees(t, p, kw, s)
	})
}

// BenchmarkPIIScanRefBenignCorpus is BenchmarkPIIScanBenignCorpus for the
// reference.
func BenchmarkPIIScanRefBenignCorpus(b *testing.B) {
	texts := benignCorpusTexts(b)
	p, kw := newPIIScanner(), newPIIKeywordMatcher()
	var out []rawFinding
	benchEach(b, texts, func(s string) { out = refPIIScan(p, kw, s, out[:0]) })
}

// TestFoldTableIsFoldRune: the table the normalizer folds runes of the
// Basic Multilingual Plane with gives what foldRune gives, for each of
// them, and foldBMP past the plane too.
func TestFoldTableIsFoldRune(t *testing.T) {
	for r := rune(utf8.RuneSelf); r <= unicode.MaxRune; r++ {
		if r >= 1<<16 && r&0xFF != 0 {
			continue // past the plane, every 256th rune
		}
		f, ok := foldBMP(foldTable(), r)
		wf, wok := foldRune(r)
		if f != wf || ok != wok {
			t.Fatalf("foldBMP(%U) = %U, %v; foldRune gives %U, %v", r, f, ok, wf, wok)
		}
	}
}
