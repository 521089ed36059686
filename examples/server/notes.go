package main

import (
	"slices"
	"strconv"
	"sync"
	"time"
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
	Tag     string    `json:"tag,omitempty"`
	Created time.Time `json:"created"`
}

func newNotes() *notes {
	n := &notes{byUser: map[string][]note{}}
	now := time.Now().UTC()
	n.add("alice", "Buy oat milk", "", now.Add(-2*time.Hour))
	n.add("alice", "Call the plumber about the kitchen tap", "", now.Add(-time.Hour))
	n.add("sam", "Quarterly review on Friday", "work", now.Add(-30*time.Minute))
	n.add("bob", "Pick up the bike from the repair shop", "", now.Add(-45*time.Minute))
	return n
}

func (n *notes) add(user, text, tag string, at time.Time) note {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.nextID++
	nt := note{ID: strconv.Itoa(n.nextID), Text: text, Tag: tag, Created: at}
	n.byUser[user] = append(n.byUser[user], nt)
	return nt
}

// find returns the user's note with that id: another user's note is as
// absent as one that never existed.
func (n *notes) find(user, id string) (note, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	i := slices.IndexFunc(n.byUser[user], func(x note) bool { return x.ID == id })
	if i < 0 {
		return note{}, false
	}
	return n.byUser[user][i], true
}

func (n *notes) list(user string) []note {
	n.mu.Lock()
	defer n.mu.Unlock()
	return slices.Clone(n.byUser[user])
}

// remove deletes the user's note with that id and returns it.
func (n *notes) remove(user, id string) (note, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	i := slices.IndexFunc(n.byUser[user], func(x note) bool { return x.ID == id })
	if i < 0 {
		return note{}, false
	}
	nt := n.byUser[user][i]
	n.byUser[user] = slices.Delete(n.byUser[user], i, i+1)
	return nt, true
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
