package assistant

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"slices"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/store"
)

// Chats: conversations a client names itself (Request.CreateThread), as
// the AI SDK's useChat does. Thread ids are one namespace in the Store, so
// a client's name is never a thread id as is: a user's chat is stored
// under an id derived from the user and the name, so two users' chats of
// one name are two threads, and one user can neither reach, squat nor
// detect another's. Wherever the Engine takes a thread id (thread, the
// one access check), the user's own chat name works too, and a name that
// is the id of a thread the user owns (one NewThread made, or a chat's
// stored id learned from a meta block or the thread list) names that
// thread.

// MaxChatIDBytes bounds a chat name (Request.CreateThread).
const MaxChatIDBytes = 128

// validChatID reports whether a chat name is 1 to MaxChatIDBytes ASCII
// letters, digits, '-' and '_': what generated ids (UUIDs, the AI SDK's
// nanoids) are made of, and safe in a URL path as is, which the AI SDK's
// resume URL needs.
func validChatID(name string) bool {
	if name == "" || len(name) > MaxChatIDBytes {
		return false
	}
	for i := 0; i < len(name); i++ {
		switch c := name[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '-', c == '_':
		default:
			return false
		}
	}
	return true
}

// errChatID is the refusal of a chat name validChatID refuses.
func errChatID(op string) error {
	return invalidRequest(op, "the chat id must be 1 to 128 characters, each an ASCII letter, a digit, '-' or '_'")
}

// chatStoredID is the id user's chat named name is stored under: the same
// for every request, and another for every other user.
func chatStoredID(userID, name string) string {
	sum := sha256.Sum256([]byte(userID + "\x00" + name))
	return "chat-" + hex.EncodeToString(sum[:16])
}

// ownThread finds the thread id names for u: u's own thread of that id,
// else u's chat of that name (stored under chatStoredID). own reports that
// one was found. When neither exists, th is another user's thread of that
// id if there is one (which only a reader the Authorizer allows may read),
// else zero: u's own names always come first.
func (e *Engine) ownThread(ctx context.Context, u parley.User, id string) (th store.Thread, own bool, err error) {
	if !validID(id) {
		return store.Thread{}, false, nil // it can name no stored row (a database may fail on it)
	}
	th, err = e.cfg.Store.GetThread(ctx, id)
	switch {
	case err == nil && th.OwnerID == u.ID:
		return th, true, nil
	case errors.Is(err, store.ErrNotFound):
		th = store.Thread{}
	case err != nil:
		return store.Thread{}, false, e.storeErr("resolve thread", err)
	}
	if !validChatID(id) {
		return th, false, nil
	}
	switch chat, err := e.cfg.Store.GetThread(ctx, chatStoredID(u.ID, id)); {
	case err == nil && chat.OwnerID == u.ID:
		return chat, true, nil
	case err != nil && !errors.Is(err, store.ErrNotFound):
		return store.Thread{}, false, e.storeErr("resolve thread", err)
	}
	return th, false, nil
}

// Streaming reports whether id names a thread (or chat) of u's own whose
// last answer is still streaming, in this process or another sharing the
// Store: a front end asks before looking for the stream elsewhere
// (assistant/httpapi's resume). Another user's id, or an unknown one, is
// false. It only reads: no permission is checked beyond ownership, and
// nothing is audited.
func (e *Engine) Streaming(ctx context.Context, u parley.User, id string) (bool, error) {
	th, own, err := e.ownThread(ctx, u, id)
	if err != nil || !own {
		return false, err
	}
	msgs, err := e.cfg.Store.ListMessages(ctx, th.ID)
	if err != nil {
		return false, e.storeErr("list messages", err)
	}
	for _, m := range slices.Backward(msgs) {
		if m.Role == store.RoleAssistant && m.SupersededAt == nil {
			return m.Status == store.StatusStreaming, nil
		}
	}
	return false, nil
}

// threadToWrite resolves the thread a request of u writes to, checked as
// WriteThread (see thread). For CreateThread, a name that is none of u's
// threads is a new chat: fresh is true, and req.ThreadID becomes the id
// the turn's write creates it under.
func (e *Engine) threadToWrite(ctx context.Context, u parley.User, req *Request) (th store.Thread, fresh bool, err error) {
	if req.CreateThread {
		switch th, own, err := e.ownThread(ctx, u, req.ThreadID); {
		case err != nil:
			return store.Thread{}, false, err
		case !own:
			req.ThreadID = chatStoredID(u.ID, req.ThreadID)
			return store.Thread{}, true, nil
		default:
			req.ThreadID = th.ID
		}
	}
	th, err = e.thread(ctx, u, req.ThreadID, WriteThread)
	return th, false, err
}
