package guard

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// topicalQualifiers are the words that make instructions or rules a
// topic's rather than the assistant's: "your instructions for the recipe",
// "the hidden rules of etiquette", "tus instrucciones para la receta",
// "deine Anweisungen für das Rezept". Languages that put the topic before
// the rules (ja, ko, zh, tr) have none.
var topicalQualifiers = map[string]bool{
	"for": true, "of": true, "on": true, "about": true, "regarding": true, // en
	"para": true, "de": true, "del": true, "sobre": true, "acerca": true, // es, pt
	"do": true, "da": true, "dos": true, "das": true, // pt (and pl "do")
	"pour": true, "du": true, "des": true, "sur": true, "concernant": true, // fr
	"per": true, "di": true, "della": true, "dei": true, "delle": true, "sul": true, "sulla": true, "su": true, // it
	"für": true, "von": true, "vom": true, "zum": true, "zur": true, "über": true, "zu": true, // de
	"voor": true, "van": true, "over": true, // nl
	"dla": true, "dotyczące": true, "o": true, // pl
	"для": true, "о": true, "об": true, "по": true, "про": true, // ru
}

// selfWords, in the words a qualifier governs, keep a request for rules the
// assistant's own: "your instructions for this conversation", "the hidden
// rules of your system", "your rules for answering users". The aimed
// lexicon adds its own words of every language (selfClasses).
var selfWords = map[string]bool{
	"you": true, "your": true, "yours": true, "yourself": true, "u": true, "ur": true,
	"me": true, "us": true, "i": true, "we": true,
	"this": true, "that": true, "these": true, "those": true, "it": true, "its": true,
	"above": true, "below": true, "before": true, "earlier": true, "previous": true, "prior": true, "preceding": true,
	"all": true, "everything": true, "every": true, "each": true, "any": true, "anything": true,
	"ai": true, "ia": true, "ki": true, "ии": true, "bot": true, "chatbot": true, "llm": true, "gpt": true, "chatgpt": true,
	"system": true, "prompt": true, "conversation": true, "chat": true, "session": true, "context": true, "task": true,
	"human": true, "humans": true, "people": true,
	"answer": true, "respond": true, "reply": true, "behave": true, "act": true, "refuse": true, "react": true,
	"answering": true, "responding": true, "replying": true, "refusing": true, "behaving": true,
	"behavior": true, "behaviour": true, "output": true, "outputs": true, "how": true,
	"content": true, "policy": true, "policies": true, "moderation": true, "ethics": true,
	"filter": true, "filters": true, "filtering": true, "restrictions": true, "secrets": true, "secret": true,
	"password": true, "passwords": true, "keys": true, "key": true, "tools": true, "tool": true, "data": true,
	// other languages' words for "you", "this" and "that"
	"tu": true, "tus": true, "ti": true, "te": true, "usted": true, "su": true, "sus": true,
	"este": true, "esta": true, "esto": true, "estos": true, "estas": true, "ese": true, "esa": true, "eso": true,
	"teu": true, "tua": true, "teus": true, "tuas": true, "você": true, "seu": true, "sua": true, "isto": true, "isso": true,
	"ton": true, "ta": true, "tes": true, "toi": true, "vous": true, "votre": true, "vos": true, "ce": true, "cet": true, "cette": true, "ces": true, "ceci": true, "cela": true,
	"tuo": true, "tue": true, "tuoi": true, "questo": true, "questa": true, "quello": true, "quella": true,
	"dich": true, "dir": true, "dein": true, "deine": true, "deinen": true, "deiner": true, "ihre": true, "ihr": true,
	"dies": true, "diese": true, "dieser": true, "dieses": true, "diesen": true,
	"jij": true, "je": true, "jouw": true, "uw": true, "dit": true, "deze": true, "dat": true,
	"ty": true, "ciebie": true, "twoje": true, "twoich": true, "twój": true, "twoja": true, "ten": true, "tej": true, "tego": true,
	"ты": true, "тебя": true, "твои": true, "твоих": true, "твой": true, "ваши": true, "вас": true, "этот": true, "этого": true, "эти": true, "этой": true,
}

// selfStems are stems of the assistant's and the user's nouns in other
// languages: the user, the assistant, the model, safety, answers.
var selfStems = []string{
	"usuari", "utilisateur", "utent", "benutzer", "nutzer", "gebruiker", "użytkownik", "пользовател",
	"asistent", "assistent", "asystent", "ассистент", "помощник",
	"modelo", "modèle", "modell", "модел",
	"segur", "sécurité", "sicurezz", "sicherheit", "veiligheid", "bezpiecze", "безопасн",
	"respuest", "réponse", "rispost", "antwort", "antwoord", "odpowied", "ответ",
	"respond", "répond", "rispond",
}

// selfClasses are the aimed lexicon's classes that make a qualifier's
// words the assistant's: its rules, its system, what came before, the
// conversation, secrets, limits.
const selfClasses = aOwn | aYour | aStrong | aRules | aLimit | aGate | aAbove | aOutput | aData | aSelf |
	aSecret | aSys | aCensor | aAll | aQuery | aMode

// promptWords, in a finding's span, name the assistant's prompt whatever
// follows: "the system prompt for troubleshooting", "your initial
// instructions on one page".
var promptWords = map[string]bool{
	"prompt": true, "preprompt": true, "pre-prompt": true, "system": true, "initial": true, "original": true,
	"pre": true, "starting": true, "base": true, "underlying": true, "core": true, "meta": true, "operator": true,
	"first": true, "message": true, "configuration": true, "programming": true, "context": true, "directives": true,
}

// topicalWords is how many words after the qualifier are read.
const topicalWords = 5

// dropTopical removes from out[from:] the prompt-extraction findings whose
// span names none of promptWords and is followed in text by a qualifier
// naming an ordinary topic: nothing of the assistant's among its next
// words before the clause ends. Such a request asks for a recipe's, a
// game's or a build's instructions; the assistant's own ("your
// instructions for this chat", "... of your system") stay findings, as
// does every finding the text holds elsewhere.
func dropTopical(text string, out []rawFinding, from int) []rawFinding {
	kept := slices.DeleteFunc(out[from:], func(f rawFinding) bool {
		return f.cat == PromptExtraction && f.start >= 0 && f.end <= len(text) && f.start < f.end &&
			!namesPrompt(text[f.start:f.end]) && topical(text[f.end:])
	})
	return out[:from+len(kept)]
}

// namesPrompt reports whether span holds one of promptWords.
func namesPrompt(span string) bool {
	for span != "" {
		w, rest, _ := nextWord(span)
		if promptWords[strings.ToLower(w)] {
			return true
		}
		if w == "" {
			if _, n := utf8.DecodeRuneInString(rest); n > 0 {
				rest = rest[n:]
			}
		}
		span = rest
	}
	return false
}

// topical reports whether rest, the text after a finding, begins (after
// the rest of the finding's last word) with a topical qualifier whose
// words, up to topicalWords or the clause's end, name something and
// nothing of the assistant's.
func topical(rest string) bool {
	rest = strings.TrimLeftFunc(rest, unicode.IsLetter) // "instruction|s"
	w, after, end := nextWord(rest)
	if end || !topicalQualifiers[strings.ToLower(w)] {
		return false
	}
	phrase := after
	named := false
	for range topicalWords {
		w, after, end = nextWord(after)
		lw := strings.ToLower(w)
		if lw == "" {
			break
		}
		if selfWords[lw] || strings.HasPrefix(lw, "your") || slices.ContainsFunc(selfStems, func(s string) bool { return strings.HasPrefix(lw, s) }) {
			return false
		}
		named = named || !articles[lw]
		if end {
			break
		}
	}
	return named && !aimedIn(phrase[:len(phrase)-len(after)], selfClasses)
}

// articles name nothing on their own.
var articles = map[string]bool{
	"the": true, "a": true, "an": true, "el": true, "la": true, "los": true, "las": true, "un": true, "una": true,
	"o": true, "os": true, "as": true, "um": true, "uma": true, "le": true, "les": true, "une": true, "l": true,
	"il": true, "lo": true, "gli": true, "uno": true, "der": true, "die": true, "das": true, "den": true, "dem": true,
	"ein": true, "eine": true, "einen": true, "het": true, "een": true,
}

// aimedIn reports whether text holds a word of the aimed lexicon of one
// of classes.
func aimedIn(text string, classes aimClass) bool {
	b := []byte(Normalize(text).Text)
	lx := aimedTables()
	found := false
	lx.m.each(b, func(id, start int) {
		if e := &lx.entries[id]; e.class&classes != 0 && e.ok(b, start, start+int(lx.m.lens[id])) {
			found = true
		}
	})
	return found
}

// nextWord returns the next word of s (letters and digits, with
// apostrophes and hyphens inside it), the text after it, and whether a
// clause ends right after it: punctuation, a line break, the end, or
// "and", "or", "then", "but" next. A clause that ends before any word
// returns "" and true.
func nextWord(s string) (word, rest string, clauseEnds bool) {
	i := 0
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	j := i
	for j < len(s) {
		r, n := utf8.DecodeRuneInString(s[j:])
		if unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r) || (r == '\'' || r == '-' || r == '’') && j > i {
			j += n
			continue
		}
		break
	}
	word, rest = s[i:j], s[j:]
	if word == "" {
		return "", rest, true
	}
	k := 0
	for k < len(rest) && (rest[k] == ' ' || rest[k] == '\t') {
		k++
	}
	if k == len(rest) {
		return word, rest, true
	}
	if r, _ := utf8.DecodeRuneInString(rest[k:]); !unicode.IsLetter(r) && !unicode.IsDigit(r) {
		return word, rest, true
	}
	next, _, _ := strings.Cut(strings.ToLower(rest[k:]), " ")
	return word, rest, next == "and" || next == "or" || next == "then" || next == "but"
}
