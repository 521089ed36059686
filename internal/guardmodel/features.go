package guardmodel

import (
	"encoding/binary"
	"math"
	"math/bits"
)

// Feature salts: one per kind of feature.
const (
	saltWord   = 0x9b05688c
	saltBigram = 0x1f83d9ab
	saltRune2  = 0x5be0cd19
	saltRune3  = 0xcbbb9d5d
)

const (
	fnvOffset = 2166136261
	fnvPrime  = 16777619
	maxWord   = 32 // bytes of a word that are hashed
)

// mix is a 32-bit finalizer (murmur3's fmix32) of h and a salt.
func mix(h, salt uint32) uint32 {
	h ^= salt
	h ^= h >> 16
	h *= 0x85ebca6b
	h ^= h >> 13
	h *= 0xc2b2ae35
	h ^= h >> 16
	return h
}

// Byte grams, three to five bytes at each position, are most of a text's
// features, and are hashed with one multiply each: the gram's bytes as a
// little-endian integer times an odd 64-bit constant, whose product's high
// 32 bits are the hash (multiplicative hashing: every input bit moves the
// high bits). Byte by byte with a finalizer, as words are, took eleven
// dependent multiplies a position instead of three independent ones.
const (
	mulGram3 = 0x9e3779b97f4a7c15
	mulGram4 = 0xc2b2ae3d27d4eb4f
	mulGram5 = 0x165667b19e3779f9
)

// gram hashes the low n bytes of g, whose mask is 1<<(8n)-1, with k.
func gram(g, mask, k uint64) uint32 { return uint32((g & mask) * k >> 32) }

// load8 returns the bytes of b from i on, at most eight, as a
// little-endian integer.
func load8(b []byte, i int) uint64 {
	if i+8 <= len(b) {
		return binary.LittleEndian.Uint64(b[i:])
	}
	var g uint64
	for k := len(b) - 1; k >= i; k-- {
		g = g<<8 | uint64(b[k])
	}
	return g
}

// isWordByte reports bytes inside words: ASCII letters and digits (the
// text is case folded) and every byte of a multi-byte rune.
func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c >= 0x80
}

// wideGrams returns the hashes of the two- and three-rune grams starting at
// b[i], for scripts of three-byte runes (Chinese, Japanese, Korean, ...),
// where a byte 5-gram is less than two characters and a word is a whole
// sentence. n is how many of the two are valid (0, 1 or 2).
func wideGrams(b []byte, i int) (h2, h3 uint32, n int) {
	h := uint32(fnvOffset)
	j := i
	for k := 0; k < 3; k++ {
		if j+3 > len(b) || b[j] < 0xE0 || b[j] >= 0xF0 {
			return
		}
		h = (h ^ uint32(b[j])) * fnvPrime
		h = (h ^ uint32(b[j+1])) * fnvPrime
		h = (h ^ uint32(b[j+2])) * fnvPrime
		j += 3
		switch k {
		case 1:
			h2, n = mix(h, saltRune2), 1
		case 2:
			h3, n = mix(h, saltRune3), 2
		}
	}
	return
}

// maxPeriod is the longest period periodicMask recognizes: "[system]" and
// "ignore " repeated are caught, a repeated sentence is not.
const maxPeriod = 8

// periodicMask sets bit i of mask (and clears the others) for every i at
// which the bytes from b[i] repeat those p bytes earlier, for a period p
// up to maxPeriod: the grams at i are then the grams at i-p again. A run of
// one character ("xxxx", "====") or a repeated short pattern would
// otherwise add the same features once per byte and outvote everything
// else in its window. Precisely, bit i is set when for some p <= min(i,
// maxPeriod), b[i:i+n] == b[i-p:i-p+n] with n = min(6, len(b)-i).
//
// eq(j) has, for each p, the high bit of byte 8-p set when b[j] == b[j-p];
// it is computed eight periods at once by comparing b[j] against the word
// of the eight bytes before it. Bit i is then eq(i) & ... & eq(i+n-1) != 0.
// The text is done 64 bytes at a time: the eq of the block and of the five
// bytes after it into an array (all ones past the text's end, where there
// is nothing to compare), then the block's bits from the array, a few
// operations a byte.
func periodicMask(b []byte, mask []uint64) []uint64 {
	words := (len(b) + 63) / 64
	if cap(mask) < words {
		mask = make([]uint64, words)
	}
	mask = mask[:words]
	n := len(b)
	var e [64 + 5]uint64
	for blk := 0; blk < n; blk += 64 {
		cnt := min(len(e), n-blk)
		t := 0
		for ; t < cnt && blk+t < 8; t++ {
			e[t] = eqAt(b, blk+t)
		}
		if t < cnt {
			// b[blk+t-8:] holds the eight bytes before each position.
			win := b[blk+t-8 : blk+cnt]
			const lo7 = 0x7f7f7f7f7f7f7f7f
			for ; len(win) > 8 && t < len(e); t, win = t+1, win[1:] {
				x := binary.LittleEndian.Uint64(win) ^ uint64(win[8])*0x0101010101010101
				e[t] = ^((x&lo7 + lo7) | x | lo7)
			}
		}
		for ; t < len(e); t++ {
			e[t] = ^uint64(0)
		}
		var m uint64
		for t := range min(64, n-blk) {
			x := e[t] & e[t+1] & e[t+2] & e[t+3] & e[t+4] & e[t+5]
			m |= (x | -x) >> 63 << t
		}
		mask[blk>>6] = m
	}
	return mask
}

// eqAt is eq(j) of periodicMask.
func eqAt(b []byte, j int) uint64 {
	if j >= 8 {
		w := binary.LittleEndian.Uint64(b[j-8:])
		x := w ^ uint64(b[j])*0x0101010101010101
		const lo7 = 0x7f7f7f7f7f7f7f7f
		return ^((x&lo7 + lo7) | x | lo7)
	}
	var e uint64
	for p := 1; p <= j; p++ {
		if b[j] == b[j-p] {
			e |= 1 << (8*(8-p) + 7)
		}
	}
	return e
}

// Walk calls fn(pos, h) for every feature of the normalized text b, in
// order of pos, the byte offset the feature starts at; h is the feature's
// 32-bit hash (its bucket is h >> (32-bits), its sign h & 1). It is the
// reference the scorer's inlined loop is tested against, and what training
// uses.
func Walk(b []byte, fn func(pos int, h uint32)) {
	per := periodicMask(b, nil)
	var prevWord, prevBigram uint32
	havePrev := false
	for i := 0; i < len(b); i++ {
		if isWordByte(b[i]) && (i == 0 || !isWordByte(b[i-1])) {
			h := uint32(fnvOffset)
			j := i
			for ; j < len(b) && isWordByte(b[j]); j++ {
				if j-i < maxWord {
					h = (h ^ uint32(b[j])) * fnvPrime
				}
			}
			// A word or pair repeated back to back counts once.
			if !havePrev || h != prevWord {
				fn(i, mix(h, saltWord))
			}
			if havePrev {
				bg := mix(bits.RotateLeft32(prevWord, 7)^h, saltBigram)
				if bg != prevBigram {
					fn(i, bg)
				}
				prevBigram = bg
			}
			prevWord, havePrev = h, true
		}
		if per[i>>6]&(1<<(i&63)) != 0 {
			continue
		}
		if b[i] >= 0xE0 {
			h2, h3, n := wideGrams(b, i)
			if n > 0 {
				fn(i, h2)
			}
			if n > 1 {
				fn(i, h3)
			}
		}
		if i+3 > len(b) {
			continue
		}
		g := load8(b, i)
		fn(i, gram(g, 1<<24-1, mulGram3))
		if i+4 <= len(b) {
			fn(i, gram(g, 1<<32-1, mulGram4))
		}
		if i+5 <= len(b) {
			fn(i, gram(g, 1<<40-1, mulGram5))
		}
	}
}

// Window sizes in bytes of normalized text, each stepped by half its size;
// texts up to WholeMax bytes are also scored whole.
var windowSizes = [...]int{192, 512}

// WholeMax is the longest text also scored as one window.
const WholeMax = 1024

// minFeatures is the fewest features a window needs to be scored: a few
// bytes say nothing.
const minFeatures = 12

// Prior is added to a window's feature count under the square root that
// scales its sum: a short window's few features are weak evidence, and are
// shrunk towards the bias ("Are you an AI?" is not an attack for sharing
// three words with one).
const Prior = 48

// Norm is the factor a window of n features scales its weight sum by.
func Norm(n int) float32 { return 1 / float32(math.Sqrt(float64(n+Prior))) }

// Windows calls fn(s, e) for every window of a text of n bytes. Windows
// shorter than their size appear only when the text is.
func Windows(n int, fn func(s, e int)) {
	if n <= WholeMax {
		fn(0, n)
	}
	for _, size := range windowSizes {
		if n <= size {
			break
		}
		step := size / 2
		for s := 0; ; s += step {
			e := min(s+size, n)
			fn(s, e)
			if e == n {
				break
			}
		}
	}
}
