package guard

import (
	_ "embed"
	"math"
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
// window reaches the mode's Medium threshold: severity by threshold, category
// by the model's family head, span the window's.
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
	var sev Severity
	switch {
	case z >= t.High:
		sev = High
	case z >= t.Medium:
		sev = Medium
	default:
		return out
	}
	a, end := sc.n.main.orig(s, e)
	conf := 1 / (1 + math.Exp(-float64(z-t.Medium)))
	return append(out, rawFinding{
		detector: learnedDetector, cat: familyCategory[m.Family(b[s:e])], kind: KindInjection,
		sev: sev, start: a, end: end, conf: conf,
	})
}
