package main

import (
	"strings"
	"testing"

	"github.com/parleyhq/parley/providers"
)

// The demo's small talk names the tools on offer, and says so when there
// are none, rather than "Tools you may use: ." (issue 25, the page).
func TestDemoSmallTalkNamesTheToolsOrSaysThereAreNone(t *testing.T) {
	if s := smallTalk("hi", "", nil); !strings.Contains(s, "No tools are offered") || strings.Contains(s, "use: .") {
		t.Errorf("no tools: %q", s)
	}
	if s := smallTalk("hi", "", []providers.ToolDef{{Name: "list_notes"}}); !strings.Contains(s, "Tools you may use: `list_notes`.") {
		t.Errorf("one tool: %q", s)
	}
}
