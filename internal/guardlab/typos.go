package guardlab

import (
	"math/rand/v2"

	"github.com/parleyhq/parley/internal/guardcorpus"
)

// WithTypos returns the English samples with typing errors: each ASCII
// word of five letters or more, with probability p, gets one edit at an
// inner position (a letter dropped, added, changed, or two neighbours
// swapped), drawn from a fixed seed. It measures whether the guard
// survives typos on real text rather than on a string written for it.
func WithTypos(samples []guardcorpus.Sample, p float64, seed uint64) []guardcorpus.Sample {
	r := rand.New(rand.NewPCG(seed, seed^0x9E3779B97F4A7C15))
	var out []guardcorpus.Sample
	for _, s := range samples {
		if s.Lang != "en" && s.Lang != "" {
			continue
		}
		s.Text = typos(s.Text, p, r)
		out = append(out, s)
	}
	return out
}

func typos(s string, p float64, r *rand.Rand) string {
	out := make([]byte, 0, len(s)+8)
	for i := 0; i < len(s); {
		j := i
		for j < len(s) && isASCIILetter(s[j]) {
			j++
		}
		if j == i {
			out = append(out, s[i])
			i++
			continue
		}
		w := []byte(s[i:j])
		if len(w) >= 5 && r.Float64() < p {
			k := 1 + r.IntN(len(w)-2) // never the first or last letter
			switch r.IntN(4) {
			case 0:
				w = append(w[:k], w[k+1:]...)
			case 1:
				w = append(w[:k+1], w[k:]...)
				w[k] = byte('a' + r.IntN(26))
			case 2:
				w[k] = byte('a' + r.IntN(26))
			case 3:
				w[k], w[k+1] = w[k+1], w[k]
			}
		}
		out = append(out, w...)
		i = j
	}
	return string(out)
}

func isASCIILetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }
