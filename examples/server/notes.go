package main

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/parleyhq/parley/tools"
)

// notes is the demo host application: each user's notes, in memory.
type notes struct {
	mu     sync.Mutex
	byUser map[string][]note
	nextID int
}

type note struct {
	ID      string    `json:"id"`
	Text    string    `json:"text"`
	Created time.Time `json:"created"`
}

func newNotes() *notes {
	n := &notes{byUser: map[string][]note{}}
	now := time.Now().UTC()
	n.add("alice", "Buy oat milk", now.Add(-2*time.Hour))
	n.add("alice", "Call the plumber about the kitchen tap", now.Add(-time.Hour))
	n.add("sam", "Quarterly review on Friday", now.Add(-30*time.Minute))
	return n
}

func (n *notes) add(user, text string, at time.Time) note {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.nextID++
	nt := note{ID: strconv.Itoa(n.nextID), Text: text, Created: at}
	n.byUser[user] = append(n.byUser[user], nt)
	return nt
}

func (n *notes) list(user string) []note {
	n.mu.Lock()
	defer n.mu.Unlock()
	return slices.Clone(n.byUser[user])
}

func (n *notes) remove(user, id string) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	before := len(n.byUser[user])
	n.byUser[user] = slices.DeleteFunc(n.byUser[user], func(x note) bool { return x.ID == id })
	return len(n.byUser[user]) < before
}

func (n *notes) stats() (users, total int) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, ns := range n.byUser {
		users++
		total += len(ns)
	}
	return users, total
}

type noArgs struct{}

type addNoteArgs struct {
	Text string `json:"text" jsonschema:"the note's text"`
}

type deleteNoteArgs struct {
	ID string `json:"id" jsonschema:"the id of the note to delete, from list_notes"`
}

// demoTools are the tools of the notes app. Each tool scopes itself to the
// calling user: the Engine passes the authenticated user in the Call.
func demoTools(n *notes) (*tools.Set, error) {
	return tools.NewSet(
		tools.Must(tools.New(tools.Spec{
			Name: "list_notes", Category: "notes", Effect: tools.Read,
			Description: "List the user's notes with their ids, newest last.",
		}, func(_ context.Context, c tools.Call, _ noArgs) (tools.Result, error) {
			ns := n.list(c.User.ID)
			return tools.OK(fmt.Sprintf("%d notes", len(ns)), ns), nil
		})),
		tools.Must(tools.New(tools.Spec{
			Name: "get_time", Category: "general", Effect: tools.Read,
			Description: "The current date and time in UTC.",
		}, func(context.Context, tools.Call, noArgs) (tools.Result, error) {
			now := time.Now().UTC()
			return tools.OK(now.Format(time.RFC1123), map[string]string{"utc": now.Format(time.RFC3339)}), nil
		})),
		tools.Must(tools.New(tools.Spec{
			Name: "add_note", Category: "notes", Effect: tools.Mutate,
			Description: "Add a note for the user.",
		}, func(_ context.Context, c tools.Call, a addNoteArgs) (tools.Result, error) {
			nt := n.add(c.User.ID, a.Text, time.Now().UTC())
			return tools.OK("added note "+nt.ID, nt), nil
		})),
		tools.Must(tools.New(tools.Spec{
			Name: "delete_note", Category: "notes", Effect: tools.Destructive,
			Description: "Delete one of the user's notes by id.",
		}, func(_ context.Context, c tools.Call, a deleteNoteArgs) (tools.Result, error) {
			if !n.remove(c.User.ID, a.ID) {
				return tools.Fail(tools.CodeNotFound, "no note with id "+a.ID), nil
			}
			return tools.OK("deleted note "+a.ID, nil), nil
		})),
		tools.Must(tools.New(tools.Spec{
			Name: "admin_stats", Category: "admin", Effect: tools.Read,
			Description: "Counts of users and notes across the whole app (staff only).",
		}, func(context.Context, tools.Call, noArgs) (tools.Result, error) {
			users, total := n.stats()
			return tools.OK(fmt.Sprintf("%d users, %d notes", users, total), map[string]int{"users": users, "notes": total}), nil
		})),
	)
}
