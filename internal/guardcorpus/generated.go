package guardcorpus

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"strings"
)

// Generated returns machine-made benign text of the kinds tool results and
// documents carry and prompts never do: base64 blobs, hex digests, UUIDs,
// and JSON records of them. Every fourth sample is held out. The same
// seed gives the same samples.
func Generated(seed uint64) []Sample {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	bytesOf := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.IntN(256))
		}
		return b
	}
	uuid := func() string {
		b := bytesOf(16)
		return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
	}
	kinds := []func() string{
		func() string { return base64.StdEncoding.EncodeToString(bytesOf(60 + rng.IntN(1400))) },
		func() string {
			var parts []string
			for range 2 + rng.IntN(30) {
				parts = append(parts, base64.RawURLEncoding.EncodeToString(bytesOf(12+rng.IntN(40))))
			}
			return strings.Join(parts, " ")
		},
		func() string {
			var parts []string
			for range 2 + rng.IntN(40) {
				parts = append(parts, hex.EncodeToString(bytesOf([]int{16, 20, 32}[rng.IntN(3)])))
			}
			return strings.Join(parts, "\n")
		},
		func() string {
			var b strings.Builder
			b.WriteString(`{"items":[`)
			for i := range 1 + rng.IntN(12) {
				if i > 0 {
					b.WriteString(",")
				}
				fmt.Fprintf(&b, `{"id":"%s","sha256":"%s","blob":"%s","size":%d}`, uuid(),
					hex.EncodeToString(bytesOf(32)), base64.StdEncoding.EncodeToString(bytesOf(8+rng.IntN(64))), rng.IntN(1<<20))
			}
			b.WriteString(`]}`)
			return b.String()
		},
	}
	var out []Sample
	for i := range 400 {
		s := Sample{Text: kinds[i%len(kinds)](), Source: OwnSource + "-generated", Family: "generated", Lang: "und", Document: i%2 == 1}
		if i%4 == 3 {
			s.Source = OwnHeldOutSource + "-generated"
		}
		out = append(out, s)
	}
	return out
}
