package guardmodel

import (
	"math"
	"testing"
)

// Regression (review of the guard v2 work): Decode checks that Scale, Bias and FamScale are finite but not the
// thresholds (User, Doc) nor FamBias. A model whose User.Medium is NaN
// decodes without error, and then every text is a finding: the guard's
// "z < t.Medium" is false for every z, even Score's -Inf for an empty
// text (whose window [0, 0) then makes learned() index start[0] of an empty
// view and panic, i.e. every empty message fails closed as a Block). An
// Inf FamBias makes Family's argmax meaningless. Decode should reject
// non-finite thresholds and family biases with ErrFormat.
func TestReviewDecodeRejectsNonFiniteThresholds(t *testing.T) {
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	for name, mutate := range map[string]func(*Model){
		"User.Medium NaN": func(m *Model) { m.User.Medium = nan },
		"User.High +Inf":  func(m *Model) { m.User.High = inf },
		"Doc.Medium NaN":  func(m *Model) { m.Doc.Medium = nan },
		"FamBias[2] -Inf": func(m *Model) { m.FamBias[2] = -inf },
	} {
		m := testModel()
		mutate(m)
		got, err := Decode(m.Encode())
		if err == nil {
			t.Errorf("%s: Decode accepted the model (User %+v, Doc %+v, FamBias %v)", name, got.User, got.Doc, got.FamBias)
		}
	}
}
