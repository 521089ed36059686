package assistant

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/store"
)

// Stored system prompts (E8). Operators with ManagePrompts keep named sets
// of instructions in the Store (store.SystemPrompts); at most one is
// active, and every turn's system prompt carries the active one in place of
// Config.CustomInstructions. Activation is atomic in the store, so every
// instance reads the same one from the next turn on.

// AuditPrompt is the audit kind of a change to the stored system prompts;
// Data {"action": "create"|"activate"|"deactivate"|"delete", "prompt": id}.
const AuditPrompt = "prompt.change"

// Limits on a stored system prompt.
const (
	MaxPromptNameBytes = 200
	MaxPromptTextBytes = 16 << 10
)

// SystemPrompts lists the stored system prompts, newest first.
func (e *Engine) SystemPrompts(ctx context.Context, u parley.User) ([]store.SystemPrompt, error) {
	sp, err := e.promptStore(ctx, u)
	if err != nil {
		return nil, err
	}
	ps, err := sp.ListSystemPrompts(ctx)
	if err != nil {
		return nil, e.storeErr("list system prompts", err)
	}
	return ps, nil
}

// CreateSystemPrompt stores a new, inactive system prompt. The name is
// optional, made one line and cut to MaxPromptNameBytes; the text keeps
// its lines and may use the placeholders {assistant_name} and
// {organization} (others stay literal).
func (e *Engine) CreateSystemPrompt(ctx context.Context, u parley.User, name, text string) (store.SystemPrompt, error) {
	sp, err := e.promptStore(ctx, u)
	if err != nil {
		return store.SystemPrompt{}, err
	}
	invalid := func(what string) error { return invalidRequest("create system prompt", what) }
	text = strings.TrimSpace(strings.ToValidUTF8(text, "\uFFFD"))
	switch {
	case strings.IndexByte(name, 0) >= 0:
		return store.SystemPrompt{}, invalid("name contains a NUL character")
	case strings.IndexByte(text, 0) >= 0:
		return store.SystemPrompt{}, invalid("text contains a NUL character")
	case text == "":
		return store.SystemPrompt{}, invalid("text is empty")
	case len(text) > MaxPromptTextBytes:
		return store.SystemPrompt{}, &Error{Code: CodeTooLarge, Op: "create system prompt", Err: errors.New("text too long"),
			Message: fmt.Sprintf("The prompt is too long: at most %d bytes.", MaxPromptTextBytes)}
	}
	p := store.SystemPrompt{Name: plainLine(strings.ToValidUTF8(name, "\uFFFD"), MaxPromptNameBytes), Text: text, CreatedBy: u.ID}
	if err := sp.CreateSystemPrompt(ctx, &p); err != nil {
		return store.SystemPrompt{}, e.storeErr("create system prompt", err)
	}
	e.auditPrompt(ctx, u, "create", p.ID)
	return p, nil
}

// ActivateSystemPrompt makes id the one active system prompt.
func (e *Engine) ActivateSystemPrompt(ctx context.Context, u parley.User, id string) error {
	sp, err := e.promptStore(ctx, u)
	if err != nil {
		return err
	}
	if !validID(id) {
		return promptNotFound(store.ErrNotFound)
	}
	if err := sp.ActivateSystemPrompt(ctx, id); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return promptNotFound(err)
		}
		return e.storeErr("activate system prompt", err)
	}
	e.auditPrompt(ctx, u, "activate", id)
	return nil
}

// DeactivateSystemPrompts leaves no stored prompt active, so
// Config.CustomInstructions applies again.
func (e *Engine) DeactivateSystemPrompts(ctx context.Context, u parley.User) error {
	sp, err := e.promptStore(ctx, u)
	if err != nil {
		return err
	}
	if err := sp.DeactivateSystemPrompts(ctx); err != nil {
		return e.storeErr("deactivate system prompts", err)
	}
	e.auditPrompt(ctx, u, "deactivate", "")
	return nil
}

// DeleteSystemPrompt removes a stored system prompt, active or not.
func (e *Engine) DeleteSystemPrompt(ctx context.Context, u parley.User, id string) error {
	sp, err := e.promptStore(ctx, u)
	if err != nil {
		return err
	}
	if !validID(id) {
		return promptNotFound(store.ErrNotFound)
	}
	if err := sp.DeleteSystemPrompt(ctx, id); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return promptNotFound(err)
		}
		return e.storeErr("delete system prompt", err)
	}
	e.auditPrompt(ctx, u, "delete", id)
	return nil
}

func promptNotFound(err error) error {
	return &Error{Code: CodeNotFound, Op: "system prompt", Err: err, Message: "That system prompt does not exist."}
}

// promptStore checks that u may manage prompts and the Store keeps them.
func (e *Engine) promptStore(ctx context.Context, u parley.User) (store.SystemPrompts, error) {
	if err := e.authorize(ctx, u, Action{Kind: ManagePrompts}); err != nil {
		return nil, err
	}
	sp, ok := e.cfg.Store.(store.SystemPrompts)
	if !ok {
		return nil, &Error{Code: CodeNotFound, Op: "system prompts", Err: errors.New("the Store does not implement store.SystemPrompts"),
			Message: "Stored system prompts are not enabled."}
	}
	return sp, nil
}

func (e *Engine) auditPrompt(ctx context.Context, u parley.User, action, id string) {
	data, _ := json.Marshal(map[string]string{"action": action, "prompt": id})
	ev := store.AuditEvent{Kind: AuditPrompt, ActorID: u.ID, Data: data}
	if err := e.cfg.Store.AppendAudit(ctx, &ev); err != nil {
		e.cfg.Logger.ErrorContext(ctx, "assistant: audit system prompt change", "err", err)
	}
}

// instructions are the operator's standing instructions for a turn: the
// active stored prompt, else Config.CustomInstructions. A store that cannot
// be read fails the turn: it must not run without the operator's rules.
func (e *Engine) instructions(ctx context.Context) (string, error) {
	if sp, ok := e.cfg.Store.(store.SystemPrompts); ok {
		p, err := sp.ActiveSystemPrompt(ctx)
		switch {
		case err == nil:
			return p.Text, nil
		case !errors.Is(err, store.ErrNotFound):
			return "", e.storeErr("read the active system prompt", err)
		}
	}
	return e.cfg.CustomInstructions, nil
}
