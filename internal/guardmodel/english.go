package guardmodel

// englishWords are English function words that are not also common words
// of the other languages of the corpus ("in", "a", "me", "do", "was" and
// "an" are): a text that is English has many, one in another language (or
// script) few.
var englishWords = map[string]bool{
	"the": true, "to": true, "of": true, "and": true, "you": true, "is": true, "it": true, "for": true,
	"that": true, "this": true, "with": true, "be": true, "are": true, "your": true, "my": true, "not": true,
	"what": true, "how": true, "all": true, "or": true, "if": true, "can": true, "from": true, "by": true,
	"at": true, "we": true, "have": true, "now": true, "any": true, "please": true, "should": true,
	"would": true, "about": true, "just": true, "only": true, "then": true, "they": true, "which": true,
}

// LooksEnglish reports whether the normalized text b reads as English: at
// least one word in eight is an English function word. The learned layer
// was calibrated mostly on English; text in other languages, where its
// grams are sparser, gets a higher threshold (guard's Config.LearnedShift
// is added on top).
func LooksEnglish(b []byte) bool {
	words, en := 0, 0
	for i := 0; i < len(b); {
		if !isWordByte(b[i]) {
			i++
			continue
		}
		j := i
		for j < len(b) && isWordByte(b[j]) {
			j++
		}
		words++
		if j-i <= 6 && englishWords[string(b[i:j])] {
			en++
		}
		i = j
	}
	return words > 0 && 8*en >= words
}
