package main

import (
	"strings"
	"testing"

	"github.com/parleyhq/parley/tools"
)

func TestCheckNoteRefusesWhatTheNotesCannotStore(t *testing.T) {
	for _, a := range []addNoteArgs{
		{Text: "  "},
		{Text: strings.Repeat("x", maxNoteBytes+1)},
		{Text: "ok", Tag: "two words"},
		{Text: "nul\x00inside"}, // PostgreSQL's text cannot hold it
		{Text: "ok", Tag: "nul\x00"},
	} {
		if r, ok := checkNote(a); ok || r.Error == nil || r.Error.Code != tools.CodeInvalidArgs {
			t.Errorf("checkNote(%q) = %+v, %v; want INVALID_ARGS", a, r, ok)
		}
	}
	if _, ok := checkNote(addNoteArgs{Text: "line one\nline two\tand a tab", Tag: "work"}); !ok {
		t.Error("checkNote refused a note with a newline and a tab")
	}
}
