package main

import (
	"context"
	"strings"
	"testing"
)

// The offline example runs as the README shows it: a card worded by the
// dry run, then the applied change and the model's report.
func TestOfflineExampleRunsBothTurns(t *testing.T) {
	var out strings.Builder
	if err := run(context.Background(), &out); err != nil {
		t.Fatal(err)
	}
	want := `turn 1 finished "approval"; the card says: Rename “Shopping” to “Groceries”
turn 2 finished "stop": Your note is now called “Groceries”.
same thread: true, titled "Rename note 1 to Groceries"; 190 tokens in, 9 out
note 1 is now "Groceries"
`
	if out.String() != want {
		t.Errorf("output:\n%s\nwant:\n%s", out.String(), want)
	}
}
