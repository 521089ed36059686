package main

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode"

	"github.com/parleyhq/parley/tools"
)

type noArgs struct{}

type addNoteArgs struct {
	Text string `json:"text" jsonschema:"the note's text"`
	Tag  string `json:"tag,omitempty" jsonschema:"an optional one-word tag, e.g. personal, work or shopping"`
}

type deleteNoteArgs struct {
	ID string `json:"id" jsonschema:"the id of the note to delete, from list_notes"`
}

// demoTools are the tools of the notes app. Each tool scopes itself to the
// calling user: the Engine passes the authenticated user in the Call.
//
// add_note and delete_note change data, so the Engine never runs them
// straight from the model: it calls their dry run (WithPropose), shows its
// summary on a confirm card, and runs the tool only when the user applies
// the card. browser_time is ClientSide: the page runs it and posts back the
// result.
func demoTools(n *notes) (*tools.Set, error) {
	addNote, err := addNoteTool(n)
	if err != nil {
		return nil, err
	}
	deleteNote, err := deleteNoteTool(n)
	if err != nil {
		return nil, err
	}
	return tools.NewSet(
		tools.Must(tools.New(tools.Spec{
			Name: "list_notes", Category: "notes", Effect: tools.Read,
			Description: "List the user's notes with their ids, newest last.",
			// Notes change only through add_note and delete_note, whose
			// calls make an earlier list stale: a list may be reused.
			Reuse: 2 * time.Minute,
		}, func(ctx context.Context, c tools.Call, _ noArgs) (tools.Result, error) {
			ns, err := n.list(ctx, c.User.ID)
			if err != nil {
				return tools.Result{}, err
			}
			summary := fmt.Sprintf("%d notes", len(ns))
			if len(ns) == 1 {
				summary = "1 note"
			}
			return tools.OK(summary, ns), nil
		})),
		tools.Must(tools.New(tools.Spec{
			Name: "get_time", Category: "general", Effect: tools.Read,
			Description: "The current date and time in UTC.",
			// No Reuse: a clock's answer is never reused.
		}, func(context.Context, tools.Call, noArgs) (tools.Result, error) {
			now := time.Now().UTC()
			return tools.OK(now.Format(time.RFC1123), map[string]string{"utc": now.Format(time.RFC3339)}), nil
		})),
		tools.Must(tools.New(tools.Spec{
			Name: "browser_time", Category: "general", Effect: tools.Read, ClientSide: true,
			Description: "The local date, time and time zone of the user's browser.",
		}, func(context.Context, tools.Call, noArgs) (tools.Result, error) {
			// Never called: the Engine hands ClientSide calls to the client.
			return tools.Fail(tools.CodeInternal, "browser_time runs in the browser"), nil
		})),
		addNote,
		deleteNote,
		tools.Must(tools.New(tools.Spec{
			Name: "admin_stats", Category: "admin", Effect: tools.Read,
			Description: "Counts of users and notes across the whole app (staff only).",
			// No Reuse: other users change these counts.
		}, func(ctx context.Context, _ tools.Call, _ noArgs) (tools.Result, error) {
			users, total, err := n.stats(ctx)
			if err != nil {
				return tools.Result{}, err
			}
			return tools.OK(fmt.Sprintf("%d users, %d notes", users, total), map[string]int{"users": users, "notes": total}), nil
		})),
	)
}

// addNoteTool adds a note. Its dry run checks the note and words the card.
func addNoteTool(n *notes) (tools.BaseTool, error) {
	return tools.WithPropose(tools.Must(tools.New(tools.Spec{
		Name: "add_note", Category: "notes", Effect: tools.Mutate,
		Description: "Add a note for the user.",
	}, func(ctx context.Context, c tools.Call, a addNoteArgs) (tools.Result, error) {
		if r, ok := checkNote(a); !ok {
			return r, nil
		}
		nt, err := n.add(ctx, c.User.ID, strings.TrimSpace(a.Text), strings.TrimSpace(a.Tag), time.Now())
		if err != nil {
			return tools.Result{}, err
		}
		return tools.OK("added note "+nt.ID, nt), nil
	})), func(_ context.Context, _ tools.Call, a addNoteArgs) (tools.Result, error) {
		if r, ok := checkNote(a); !ok {
			return r, nil
		}
		summary := "Add the note “" + strings.TrimSpace(a.Text) + "”"
		if tag := strings.TrimSpace(a.Tag); tag != "" {
			summary += " tagged " + tag
		}
		return tools.OK(summary, nil), nil // no data: the card shows the arguments
	})
}

// deleteNoteTool deletes a note. Its dry run finds the note, so a card
// names what will go, and a note that is not the user's gets no card: the
// model hears NOT_FOUND instead.
func deleteNoteTool(n *notes) (tools.BaseTool, error) {
	return tools.WithPropose(tools.Must(tools.New(tools.Spec{
		Name: "delete_note", Category: "notes", Effect: tools.Destructive,
		Description: "Delete one of the user's notes by id.",
	}, func(ctx context.Context, c tools.Call, a deleteNoteArgs) (tools.Result, error) {
		// Checked again: the note may have gone since the card was shown,
		// and as ids are never reused, no other note can answer to its id.
		nt, ok, err := n.remove(ctx, c.User.ID, a.ID)
		if err != nil {
			return tools.Result{}, err
		}
		if !ok {
			return tools.Fail(tools.CodeNotFound, "no note with id "+a.ID), nil
		}
		return tools.OK("deleted note "+a.ID, nt), nil
	})), func(ctx context.Context, c tools.Call, a deleteNoteArgs) (tools.Result, error) {
		nt, ok, err := n.find(ctx, c.User.ID, a.ID)
		if err != nil {
			return tools.Result{}, err
		}
		if !ok {
			return tools.Fail(tools.CodeNotFound, "no note with id "+a.ID), nil
		}
		return tools.OK("Delete note "+nt.ID+" (“"+nt.Text+"”)", nt), nil
	})
}

// maxNoteBytes bounds a note's text.
const maxNoteBytes = 500

// checkNote refuses a note the app would not store, in the dry run and
// again when the tool runs.
func checkNote(a addNoteArgs) (tools.Result, bool) {
	text, tag := strings.TrimSpace(a.Text), strings.TrimSpace(a.Tag)
	switch {
	case text == "":
		return tools.Fail(tools.CodeInvalidArgs, "the note's text is empty"), false
	case len(text) > maxNoteBytes:
		return tools.Fail(tools.CodeInvalidArgs, fmt.Sprintf("a note holds at most %d bytes", maxNoteBytes)), false
	case len(tag) > 30 || strings.ContainsFunc(tag, unicode.IsSpace):
		return tools.Fail(tools.CodeInvalidArgs, "a tag is one short word"), false
	case strings.ContainsRune(text+tag, 0):
		// PostgreSQL's text cannot hold one, and no note needs one.
		return tools.Fail(tools.CodeInvalidArgs, "a note cannot hold a NUL character"), false
	}
	return tools.Result{}, true
}
