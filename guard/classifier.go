package guard

import (
	_ "embed"
	"math"
	"slices"
	"sync"

	"github.com/parleyhq/parley/internal/guardmodel"
)

// The learned layer: a linear classifier over hashed character n-grams and
// words of the normalized text, scored over windows (see
// internal/guardmodel), trained by internal/cmd/guardtrain on the
// third-party guard corpus and the project's own. Its weights are embedded.
//
//go:embed model.bin
var modelBin []byte

var builtinModel = sync.OnceValues(func() (*guardmodel.Model, error) {
	return guardmodel.Decode(modelBin)
})

// learnedDetector names the learned layer's findings.
const learnedDetector = "injection/learned"

// familyCategory is the category of each family of the model.
var familyCategory = [guardmodel.NumFamilies]Category{
	guardmodel.FamOverride:   InstructionOverride,
	guardmodel.FamJailbreak:  Jailbreak,
	guardmodel.FamExtraction: PromptExtraction,
	guardmodel.FamExfil:      DataExfiltration,
}

// learned adds the learned layer's finding on the main view, if its best
// window reaches the mode's Medium threshold. Alone it is Medium: it warns,
// keeps the message out of later history, fences a document. It is High
// (blocks a message, withholds a document) only past the High threshold
// and when a rule found an injection in the same text: a statistical
// score on text nobody here has seen is not, by itself, reason enough to
// refuse it. Its category is the model's family head's, its span the
// window's.
//
// Its score also decides whether the typo view is read (typo.go): within
// typoMargin of the Medium threshold, words are corrected around the best
// window, the English rules read them there if no rule found a Medium
// injection in the text, and the layer scores the corrected text and
// keeps the higher score (its finding then says Via "typo"). A rule found
// only in the typo view does not make the layer's finding High.
func (g *Guard) learned(tab *tables, sc *scratch, out []rawFinding) []rawFinding {
	if g.rulesOnly {
		return out
	}
	m := tab.model
	ruled := slices.ContainsFunc(out, isInjection)
	v, via := &sc.n.main, ""
	z, s, e := m.Score(v.b, &sc.ms)
	t := m.User
	if sc.doc {
		t = m.Doc
	}
	z = g.adjust(z, t, v.b[s:e])
	if z >= t.Medium-typoMargin {
		tv := &sc.st.typo
		if ok, lo, hi := tab.inj.typos.correct(v, max(0, s-typoContext), min(len(v.b), e+typoContext), tv); ok {
			if !slices.ContainsFunc(out, isMediumInjection) {
				out = tab.inj.scanTypoView(tv, lo, hi, &sc.st, out)
			}
			if z2, s2, e2 := m.Score(tv.b, &sc.ms); g.adjust(z2, t, tv.b[s2:e2]) > z {
				z, s, e, v, via = g.adjust(z2, t, tv.b[s2:e2]), s2, e2, tv, "typo"
			}
		}
	}
	sc.margin, sc.scored = z-t.Medium, true
	if z < t.Medium+negationMargin && via == "" && !ruled && holdsNegated(sc.aim.negated, s, e) {
		// "Ne pas ignorer les consignes": the grams of an override under
		// a negation the aimed detector read.
		return out
	}
	if z < t.Medium {
		if jc := g.judge; jc != nil && -sc.margin <= jc.band {
			// A Judge may turn this into a finding: keep its window.
			sc.jcat = familyCategory[m.Family(v.b[s:e])]
			sc.jstart, sc.jend = v.orig(s, e)
		}
		return out
	}
	sev := Severity(Medium)
	if z >= t.High && ruled {
		sev = High
	}
	a, end := v.orig(s, e)
	conf := 1 / (1 + math.Exp(-float64(z-t.Medium)))
	sc.learnedAt = len(out)
	return append(out, rawFinding{
		detector: learnedDetector, cat: familyCategory[m.Family(v.b[s:e])], kind: KindInjection,
		sev: sev, start: a, end: end, conf: conf, via: via,
	})
}

// otherLangShift is how much higher the learned layer's thresholds are
// for a window that does not read as English. Scored on sources left out
// of training, the layer adds little in other languages, where the aimed
// rules carry the recall (5% of attacks alone, 31% with the rules), and it
// raises false alarms on ordinary requests: 4.4% at the English
// threshold, 1.3% one and a half logits higher, for 1.5 points of recall
// (guardeval -loso prints the trade-off). On the project's own held-out
// rows, written like its training rows, the shift costs more (other
// languages' recall 45% -> 25%): the layer knows that style, not the
// languages. otherLangReach is how far under the threshold a window must
// be for its language not to matter.
const (
	otherLangShift = 1.5
	otherLangReach = 4
)

// adjust returns the learned layer's score z of the window w with the
// host's shift and, near the thresholds t, the other-language shift.
func (g *Guard) adjust(z float32, t guardmodel.Thresholds, w []byte) float32 {
	z -= g.shift
	if z >= t.Medium-otherLangReach && !guardmodel.LooksEnglish(w) {
		z -= otherLangShift
	}
	return z
}

// negationMargin is how far over its threshold the learned layer must be
// to report a window that holds a negated override.
const negationMargin = 1

// holdsNegated reports whether [s, e) holds one of the spans.
func holdsNegated(spans [][2]int, s, e int) bool {
	for _, n := range spans {
		if s <= n[0] && n[1] <= e {
			return true
		}
	}
	return false
}

func isInjection(f rawFinding) bool { return f.kind == KindInjection }

func isMediumInjection(f rawFinding) bool { return f.kind == KindInjection && f.sev >= Medium }
