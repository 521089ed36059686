// Package phantom finds an assistant's claims of completed changes: "I
// have deleted note 1.", "Ticket #42 was closed.", "Done! Booked for
// Friday." (feature A8). The assistant package withholds such a sentence
// when no changing tool call succeeded in the turn, so a model cannot
// tell the user that something happened that did not.
//
// The check reads one sentence at a time, in English, German, French,
// Spanish, Italian, Portuguese, Polish and Dutch, and knows the shapes a
// claim takes in each: a first-person past ("I restarted", "ich habe …
// gelöscht", "eliminé", "usunąłem"), a passive or a state ("has been
// cancelled", "wurde entfernt", "è stato eliminato", "zostało usunięte",
// "is now archived"), a verbless status line ("Note deleted.", "Ticket
// created: SUP-1094") and a done marker ("Done!", "✅", "Erledigt",
// "¡Listo!"). What keeps a sentence from being a claim: a question, a
// negation, a modal, future or condition ("I'll delete", "if you delete",
// "would be deleted"), quoted text, and for passives and status lines a
// sign that the sentence reports what a record says (a date it happened
// on, "by Alice", "according to the logs", "twice"). A third party's past
// action ("Alice deleted the file") is never a claim.
//
// It is a rule set, not a model: cheap (a sentence costs well under a
// microsecond per word), deterministic, and measured on a labelled corpus
// in assistant/testdata/phantom (see BENCHMARKS.md for precision and
// recall, per language and on a held-out set).
package phantom
