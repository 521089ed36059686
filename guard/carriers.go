package guard

// Hidden-text carriers are invisible code points that can hold bytes:
// variation selectors (the "emoji smuggling" encoding: VS1-VS16 are the
// bytes 0-15 and VS17-VS256 the bytes 16-255, appended after a base
// character) and the invisible operators U+2061-U+2064 (used as bits, or as
// bits and a separator). A run of minCarrierRun or more is a HiddenText
// finding whether or not it decodes: legitimate text uses one selector
// after a character (VS16 after an emoji, VS15 for text presentation, one
// ideographic variation selector) and one operator at a time. Unicode tag
// characters are the third carrier; the normalizer decodes them.
const minCarrierRun = 4

// hiddenVia reports the views that are hidden-text carriers: each run has
// a HiddenText finding of its own, and its payload no EncodedPayload one.
func hiddenVia(via string) bool {
	return via == "tags" || via == "variation_selectors" || via == "invisible_operators"
}

func carrierDetector(via string) string {
	if via == "invisible_operators" {
		return "injection/invisible_operators"
	}
	return "injection/variation_selectors"
}

// carrierAt returns the carrier family of the rune at text[i:], "" if it
// is not a carrier, and the rune's size.
func carrierAt(text string, i int) (via string, size int) {
	switch text[i] {
	case 0xEF: // U+FE00-U+FE0F: EF B8 80-8F
		if i+2 < len(text) && text[i+1] == 0xB8 && text[i+2]&0xF0 == 0x80 {
			return "variation_selectors", 3
		}
	case 0xF3: // U+E0100-U+E01EF: F3 A0 84 80 - F3 A0 87 AF
		if i+3 < len(text) && text[i+1] == 0xA0 && 0x84 <= text[i+2] && text[i+2] <= 0x87 &&
			0x80 <= text[i+3] && text[i+3] <= 0xBF && (text[i+2] < 0x87 || text[i+3] <= 0xAF) {
			return "variation_selectors", 4
		}
	case 0xE2: // U+2061-U+2064: E2 81 A1-A4
		if i+2 < len(text) && text[i+1] == 0x81 && 0xA1 <= text[i+2] && text[i+2] <= 0xA4 {
			return "invisible_operators", 3
		}
	}
	return "", 1
}

// carrierRun returns the end of the run of carriers of family via that
// starts at p, and their number. findSymbolRuns finds the runs.
func carrierRun(text string, p int, via string) (end, count int) {
	end = p
	for end < len(text) {
		v, size := carrierAt(text, end)
		if v != via {
			break
		}
		end += size
		count++
	}
	return end, count
}

// decodeVariationSelectors decodes a run of variation selectors to bytes.
func decodeVariationSelectors(dst []byte, src string) []byte {
	for _, r := range src {
		switch {
		case 0xFE00 <= r && r <= 0xFE0F:
			dst = append(dst, byte(r-0xFE00))
		case 0xE0100 <= r && r <= 0xE01EF:
			dst = append(dst, byte(r-0xE0100+16))
		}
	}
	return dst
}

// decodeInvisibleOperators decodes a run of U+2061-U+2064. The two
// commonest operators are taken as bits (the lower one as 0, then as 1),
// in groups of 8 or, when a third operator occurs, in the groups it
// separates; failing that, every operator is taken as two bits. The first
// reading that gives text wins.
func decodeInvisibleOperators(dst []byte, src string) ([]byte, bool) {
	var count [4]int
	for _, r := range src {
		if 0x2061 <= r && r <= 0x2064 {
			count[r-0x2061]++
		}
	}
	a := 0 // the commonest, then b the next
	for i := range count {
		if count[i] > count[a] {
			a = i
		}
	}
	b := (a + 1) % 4
	for i := range count {
		if i != a && count[i] > count[b] {
			b = i
		}
	}
	a, b = min(a, b), max(a, b)
	for _, swap := range [2]bool{false, true} {
		dst = invisibleBits(dst[:0], src, rune(a), rune(b), swap)
		if isText(dst) {
			return dst, true
		}
	}
	dst = dst[:0]
	var acc byte
	n := 0
	for _, r := range src {
		if 0x2061 <= r && r <= 0x2064 && len(dst) < maxDecodedBytes {
			acc = acc<<2 | byte(r-0x2061)
			if n++; n == 4 {
				dst = append(dst, acc)
				acc, n = 0, 0
			}
		}
	}
	return dst, isText(dst)
}

// invisibleBits reads operators zero and one (offsets from U+2061) as
// bits, most significant first; any other operator ends a group.
func invisibleBits(dst []byte, src string, zero, one rune, swap bool) []byte {
	var acc byte
	n := 0
	for _, r := range src {
		if len(dst) >= maxDecodedBytes {
			break
		}
		switch s := r - 0x2061; s {
		case zero, one:
			acc <<= 1
			if (s == one) != swap {
				acc |= 1
			}
			if n++; n == 8 {
				dst = append(dst, acc)
				acc, n = 0, 0
			}
		default:
			if n > 0 {
				dst = append(dst, acc)
				acc, n = 0, 0
			}
		}
	}
	return dst
}
