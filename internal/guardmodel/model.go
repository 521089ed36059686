package guardmodel

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"
)

// Bits is the log2 of the number of weight buckets.
const Bits = 18

// Families the model's category head tells apart, in the order of its
// outputs.
const (
	FamOverride   = iota // instruction override, including planted in documents
	FamJailbreak         // roleplay and persona jailbreaks
	FamExtraction        // system-prompt extraction
	FamExfil             // data exfiltration (links, images, sends)
	NumFamilies
)

// FamBits is the log2 of the buckets of each family head.
const FamBits = 16

// Thresholds are the logits at which a score becomes a finding of a given
// severity, per mode.
type Thresholds struct {
	Medium, High float32
}

// Model is the trained classifier.
type Model struct {
	Scale     float32              // weight = W[i] * Scale
	Bias      float32              // logit bias
	W         []int16              // 1<<Bits buckets
	Fam       [NumFamilies][]int16 // 1<<FamBits buckets each
	FamScale  float32
	FamBias   [NumFamilies]float32
	User, Doc Thresholds
}

// magic names the format and the features the weights are for: PGM1
// models hashed byte grams byte by byte, and their weights mean nothing to
// this scorer.
var magic = []byte("PGM2")

// ErrFormat is returned by Decode for bytes that are not a model.
var ErrFormat = errors.New("guardmodel: not a model")

// Encode serializes m (little endian).
func (m *Model) Encode() []byte {
	var b bytes.Buffer
	b.Write(magic)
	w := func(v any) { _ = binary.Write(&b, binary.LittleEndian, v) }
	w(uint32(Bits))
	w(uint32(FamBits))
	w(m.Scale)
	w(m.Bias)
	w(m.FamScale)
	w(m.FamBias)
	w(m.User)
	w(m.Doc)
	w(m.W)
	for _, f := range m.Fam {
		w(f)
	}
	return b.Bytes()
}

// Decode reads a model written by Encode.
func Decode(data []byte) (*Model, error) {
	if !bytes.HasPrefix(data, magic) {
		return nil, ErrFormat
	}
	r := bytes.NewReader(data[len(magic):])
	m := &Model{}
	var bitsW, bitsF uint32
	rd := func(v any) error { return binary.Read(r, binary.LittleEndian, v) }
	for _, v := range []any{&bitsW, &bitsF} {
		if err := rd(v); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrFormat, err)
		}
	}
	if bitsW != Bits || bitsF != FamBits {
		return nil, fmt.Errorf("%w: %d/%d bits, want %d/%d", ErrFormat, bitsW, bitsF, Bits, FamBits)
	}
	m.W = make([]int16, 1<<Bits)
	for i := range m.Fam {
		m.Fam[i] = make([]int16, 1<<FamBits)
	}
	for _, v := range []any{&m.Scale, &m.Bias, &m.FamScale, &m.FamBias, &m.User, &m.Doc, m.W, m.Fam[0], m.Fam[1], m.Fam[2], m.Fam[3]} {
		if err := rd(v); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrFormat, err)
		}
	}
	if r.Len() != 0 {
		return nil, fmt.Errorf("%w: %d trailing bytes", ErrFormat, r.Len())
	}
	for _, f := range append([]float32{m.Scale, m.Bias, m.FamScale, m.User.Medium, m.User.High, m.Doc.Medium, m.Doc.High}, m.FamBias[:]...) {
		if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
			return nil, fmt.Errorf("%w: weights or thresholds not finite", ErrFormat)
		}
	}
	if m.User.Medium > m.User.High || m.Doc.Medium > m.Doc.High {
		return nil, fmt.Errorf("%w: a Medium threshold above its High", ErrFormat)
	}
	return m, nil
}

// Scratch is the reusable per-call state of Score.
type Scratch struct {
	sum []int32  // signed weight sums, by checkpoint
	cnt []int32  // feature counts, by checkpoint
	per []uint64 // periodicMask of the text
}

// stride is the distance between the checkpoints of the prefix sums: every
// window starts and ends at a multiple of it or at the text's end.
const stride = 32

// Score returns the logit of b's best window and that window.
func (m *Model) Score(b []byte, sc *Scratch) (logit float32, s, e int) {
	n := len(b)
	cps := n/stride + 2 // checkpoints 0, stride, ... and one for the end
	if cap(sc.sum) < cps {
		sc.sum = make([]int32, cps, cps+cps/4)
		sc.cnt = make([]int32, cps, cps+cps/4)
	}
	sum, cnt := sc.sum[:cps], sc.cnt[:cps]
	sc.per = periodicMask(b, sc.per)
	m.prefix(b, sc.per, sum, cnt)
	// at is the checkpoint of byte offset i.
	at := func(i int) int {
		if i == n {
			return cps - 1
		}
		return i / stride
	}
	best := float32(math.Inf(-1))
	Windows(n, func(ws, we int) {
		a, z := at(ws), at(we)
		c := cnt[z] - cnt[a]
		if c < minFeatures {
			return
		}
		v := m.Bias + m.Scale*float32(sum[z]-sum[a])*Norm(int(c))
		if v > best {
			best, s, e = v, ws, we
		}
	})
	if s == e {
		return float32(math.Inf(-1)), 0, 0
	}
	return best, s, e
}

// prefix fills sum[k] and cnt[k] with the signed weight sum and count of the
// features starting before byte k*stride, and their last element with those
// of the whole text. It is Walk, reordered within each stride: the word
// features of the words starting in the stride, then its byte grams. A sum
// at every byte, rather than every stride bytes, wrote eight bytes of
// scratch for each byte of text.
//
// The grams of a stride whose positions all have eight bytes after them
// are summed by grams, a loop with few enough live values to stay in
// registers; their count is the stride's positions less its periodic ones.
func (m *Model) prefix(b []byte, per []uint64, sum, cnt []int32) {
	w := (*[1 << Bits]int16)(m.W)
	var acc, k int32
	var ws wordState
	n := len(b)
	for base := 0; base < n; base += stride {
		sum[base/stride], cnt[base/stride] = acc, k
		end := min(base+stride, n)
		pm := per[base>>6] >> (base & 63) // stride divides 64
		a, c := ws.words(w, b, base, end, pm)
		acc, k = acc+a, k+c
		if end+7 <= n {
			acc += grams(w, b[base:end+7], pm)
			k += 3 * int32(end-base-bits.OnesCount32(uint32(pm)&(1<<(end-base)-1)))
			continue
		}
		a, c = tailGrams(w, b, base, end, pm)
		acc, k = acc+a, k+c
	}
	sum[len(sum)-1], cnt[len(cnt)-1] = acc, k
}

// wordState is what the word features carry from one word to the next.
type wordState struct {
	prevWord, prevBigram uint32
	havePrev             bool
}

// words returns the signed sum and count of the features of the words that
// start in b[base:end], and of the wide grams of its non-periodic
// positions (pm's low bits are base's and on). An ASCII word is hashed at
// its start and then skipped whole.
func (ws *wordState) words(w *[1 << Bits]int16, b []byte, base, end int, pm uint64) (acc, k int32) {
	const shift = 32 - Bits
	for i := base; i < end; i, pm = i+1, pm>>1 {
		c := b[i]
		if !wordByte[c] {
			continue
		}
		if i == 0 || !wordByte[b[i-1]] {
			h := uint32(fnvOffset)
			var or byte
			j := i
			for ; j < len(b) && wordByte[b[j]]; j++ {
				if j-i < maxWord {
					h = (h ^ uint32(b[j])) * fnvPrime
				}
				or |= b[j]
			}
			if !ws.havePrev || h != ws.prevWord {
				hw := mix(h, saltWord)
				acc += signed(w[hw>>shift], hw)
				k++
			}
			if ws.havePrev {
				bg := mix(rotl7(ws.prevWord)^h, saltBigram)
				if bg != ws.prevBigram {
					acc += signed(w[bg>>shift], bg)
					k++
				}
				ws.prevBigram = bg
			}
			ws.prevWord, ws.havePrev = h, true
			if or < 0x80 {
				// b[j] is not in a word: the loop goes on after it.
				step := min(j, end) - i
				i, pm = i+step, pm>>step
				continue
			}
		}
		if c >= 0xE0 && pm&1 == 0 {
			h2, h3, nw := wideGrams(b, i)
			if nw > 0 {
				acc += signed(w[h2>>shift], h2)
				k++
			}
			if nw > 1 {
				acc += signed(w[h3>>shift], h3)
				k++
			}
		}
	}
	return acc, k
}

// grams returns the signed sum of the byte grams at the positions of
// b[:len(b)-7] whose bit in pm is clear: every such position has eight
// bytes, and three grams.
func grams(w *[1 << Bits]int16, b []byte, pm uint64) (acc int32) {
	const shift = 32 - Bits
	for ; len(b) >= 8; b, pm = b[1:], pm>>1 {
		if pm&1 != 0 {
			continue
		}
		g := binary.LittleEndian.Uint64(b)
		h := gram(g, 1<<24-1, mulGram3)
		acc += signed(w[h>>shift], h)
		h = gram(g, 1<<32-1, mulGram4)
		acc += signed(w[h>>shift], h)
		h = gram(g, 1<<40-1, mulGram5)
		acc += signed(w[h>>shift], h)
	}
	return acc
}

// tailGrams is grams for the positions of b[base:end] near the text's end,
// which have fewer than eight bytes after them.
func tailGrams(w *[1 << Bits]int16, b []byte, base, end int, pm uint64) (acc, k int32) {
	const shift = 32 - Bits
	n := len(b)
	for i := base; i < end && i+3 <= n; i, pm = i+1, pm>>1 {
		if pm&1 != 0 {
			continue
		}
		g := load8(b, i)
		h := gram(g, 1<<24-1, mulGram3)
		acc += signed(w[h>>shift], h)
		k++
		if i+4 <= n {
			h = gram(g, 1<<32-1, mulGram4)
			acc += signed(w[h>>shift], h)
			k++
			if i+5 <= n {
				h = gram(g, 1<<40-1, mulGram5)
				acc += signed(w[h>>shift], h)
				k++
			}
		}
	}
	return acc, k
}

// signed is the weight v of a feature with hash h, negated when h is odd.
func signed(v int16, h uint32) int32 {
	s := int32(h<<31) >> 31 // 0 or -1
	return (int32(v) ^ s) - s
}

// wordByte is isWordByte as a table.
var wordByte = func() (t [256]bool) {
	for c := range t {
		t[c] = isWordByte(byte(c))
	}
	return t
}()

func rotl7(x uint32) uint32 { return x<<7 | x>>25 }

// Family returns the most likely family of the window b[s:e].
func (m *Model) Family(b []byte) int {
	const shift = 32 - FamBits
	var acc [NumFamilies]float32
	n := 0
	Walk(b, func(_ int, h uint32) {
		n++
		sign := float32(1)
		if h&1 != 0 {
			sign = -1
		}
		for f := range acc {
			acc[f] += sign * float32(m.Fam[f][h>>shift])
		}
	})
	best := 0
	for f := range acc {
		z := m.FamBias[f] + m.FamScale*acc[f]*Norm(n)
		acc[f] = z
		if z > acc[best] {
			best = f
		}
	}
	return best
}
