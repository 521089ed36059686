package phantom

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestShapes holds the shapes of a claim and of what is not one, in each
// language the check reads, so a change to a rule that breaks one fails
// here by name rather than as a point of precision.
func TestShapes(t *testing.T) {
	claims := []string{
		"I have deleted note 1 for you.",
		"Ticket #42 was closed.",
		"Done!",
		"Note deleted.",
		"Restarted nginx and reloaded the config.",
		"No problem, I've voided the duplicate invoice.",
		"Ich habe die Notiz gelöscht.",
		"J'ai supprimé la note 1.",
		"Eliminé la nota 1.",
		"Ho eliminato la nota 1.",
		"Apaguei a nota 1.",
		"Usunąłem notatkę nr 1.",
		"Ik heb notitie 1 verwijderd.",
		"Acabo de enviar el correo.",
		"✅ Wysłano e-mail do działu finansów.",
	}
	benign := []string{
		"Should I delete it?",
		"I can delete note 1 if you want.",
		"I'll delete it once you approve the card.",
		"The note was created on 3 May.",
		"Alice deleted this file in March.",
		"I did not delete anything.",
		"If you delete it, it's gone.",
		"The confirmation email says: \"Your booking has been cancelled.\"",
		"Deleted notes are kept for 30 days.",
		"Ich lösche sie, sobald du die Karte bestätigt hast.",
		"La eliminaré en cuanto apruebes la tarjeta.",
		"Daarna herstart ik de worker-pods een voor een.",
		"Notatka została utworzona 3 maja.",
		"",
	}
	for _, s := range claims {
		if _, ok := Claims(s); !ok {
			t.Errorf("Claims(%q) = false, want a claim", s)
		}
	}
	for _, s := range benign {
		if c, ok := Claims(s); ok {
			t.Errorf("Claims(%q) = %+v, want none", s, c)
		}
	}
}

func TestSentenceEnd(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int
	}{
		{"I deleted it. Then", len("I deleted it. ")},
		{"Version 3.5 is out", 0},
		{"It ends here.", 0}, // the end of the text is not known to end the sentence
		{"A line\nnext", len("A line\n")},
		{"Really?! Yes", len("Really?! ")},
		{"完成。下一个", len("完成。")},
	} {
		if got := SentenceEnd(tc.in); got != tc.want {
			t.Errorf("SentenceEnd(%q) = %d, want %d", tc.in, got, tc.want)
		}
	}
}

func TestDecided(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int
	}{
		{"Version 3", len("Version 3")},
		{"It ends here.", len("It ends here")},
		{"Really?!", len("Really")},
		{"Wait…", len("Wait")},
		{"Wait\xe2\x80", len("Wait")}, // '…' cut short
		{"", 0},
	} {
		if got := Decided(tc.in); got != tc.want {
			t.Errorf("Decided(%q) = %d, want %d", tc.in, got, tc.want)
		}
	}
}

// FuzzSentenceEndResumes holds Decided to its contract: a scan that
// resumes at Decided(s) finds the sentence end a scan from the start does,
// whatever follows s.
func FuzzSentenceEndResumes(f *testing.F) {
	for _, s := range [][2]string{{"It ends here.", " Next"}, {"Version 3.", "5 is out"}, {"Wait\xe2\x80", "\xa6 yes"}, {"x?", "! y"}, {"..\xe2", "\x80\xa6 z"}, {"完成", "。下"}, {"", "a. b"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, s, next string) {
		if SentenceEnd(s) != 0 {
			return
		}
		d := Decided(s)
		if d < 0 || d > len(s) {
			t.Fatalf("Decided(%q) = %d", s, d)
		}
		want := SentenceEnd(s + next)
		got := SentenceEnd((s + next)[d:])
		if got > 0 {
			got += d
		}
		if got != want {
			t.Fatalf("SentenceEnd(%q + %q) = %d, resumed at Decided = %d: %d", s, next, want, d, got)
		}
	})
}

// FuzzClaims holds the check to its contract on any text: no panic, the
// sentences concatenate to the text, and a sentence's verdict does not
// depend on the text around it.
func FuzzClaims(f *testing.F) {
	for _, s := range []string{"I have deleted note 1. Should I go on?", "Done ✅", "„Notiz“ gelöscht:\n- x", "\"open", "`a", "acabo de", "viens d'"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var b strings.Builder
		for sent := range Sentences(s) {
			if sent == "" {
				t.Fatal("empty sentence")
			}
			b.WriteString(sent)
			c, ok := Check(sent)
			if ok && c.Lang == "" {
				t.Fatalf("Check(%q): a claim with no language", sent)
			}
			// A sentence's verdict does not depend on the text before it.
			if _, inText := Claims("Here you are.\n" + sent); inText != ok {
				t.Fatalf("Check(%q) = %v, but after another sentence %v", sent, ok, inText)
			}
		}
		if b.String() != s {
			t.Fatalf("sentences of %q concatenate to %q", s, b.String())
		}
		if n := SentenceEnd(s); n < 0 || n > len(s) || (utf8.ValidString(s) && !utf8.ValidString(s[:n])) {
			t.Fatalf("SentenceEnd(%q) = %d", s, n)
		}
	})
}

func BenchmarkClaims(b *testing.B) {
	lines := readCorpus(b, "corpus.jsonl")
	n := 0
	for _, l := range lines {
		n += len(l.Text)
	}
	b.SetBytes(int64(n))
	b.ReportAllocs()
	for b.Loop() {
		for _, l := range lines {
			Claims(l.Text)
		}
	}
}
