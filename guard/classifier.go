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
func (g *Guard) learned(sc *scratch, out []rawFinding) []rawFinding {
	m := g.model
	if m == nil {
		return out
	}
	b := sc.n.main.b
	z, s, e := m.Score(b, &sc.ms)
	t := m.User
	if sc.doc {
		t = m.Doc
	}
	z -= g.shift
	if z < t.Medium {
		return out
	}
	sev := Severity(Medium)
	if z >= t.High && slices.ContainsFunc(out, func(f rawFinding) bool { return f.kind == KindInjection }) {
		sev = High
	}
	a, end := sc.n.main.orig(s, e)
	conf := 1 / (1 + math.Exp(-float64(z-t.Medium)))
	return append(out, rawFinding{
		detector: learnedDetector, cat: familyCategory[m.Family(b[s:e])], kind: KindInjection,
		sev: sev, start: a, end: end, conf: conf,
	})
}
