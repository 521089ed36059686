package httpapi

import (
	"net/http"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/assistant"
)

// modelRefJSON names a model on a connection.
type modelRefJSON struct {
	Connection string `json:"connection"`
	Model      string `json:"model"`
}

// connectionJSON is a connection as a model picker shows it: nothing secret.
type connectionJSON struct {
	Name            string   `json:"name"`
	DefaultModel    string   `json:"default_model"`
	Models          []string `json:"models"` // the default first
	ContextWindow   int      `json:"context_window"`
	MaxOutputTokens int      `json:"max_output_tokens,omitempty"`
	Settings        []string `json:"settings"` // what "settings" in a stream request may set here
}

// modelsJSON is the answer of GET /api/chat/models.
type modelsJSON struct {
	Connections []connectionJSON `json:"connections"`
	Default     modelRefJSON     `json:"default"`
	Current     modelRefJSON     `json:"current"`
	Preference  *modelRefJSON    `json:"preference,omitempty"`
}

func toModelsJSON(ch assistant.ModelChoices) modelsJSON {
	out := modelsJSON{Connections: make([]connectionJSON, len(ch.Connections)),
		Default: modelRefJSON(ch.Default), Current: modelRefJSON(ch.Current)}
	for i, c := range ch.Connections {
		settings := c.Settings.Names()
		if settings == nil {
			settings = []string{}
		}
		out.Connections[i] = connectionJSON{Name: c.Name, DefaultModel: c.Model, Models: c.Models,
			ContextWindow: c.ContextWindow, MaxOutputTokens: c.MaxOutputTokens, Settings: settings}
	}
	if p := ch.Preference; p != nil {
		out.Preference = &modelRefJSON{Connection: p.Connection, Model: p.Model}
	}
	return out
}

func (h *Handler) listModels(w http.ResponseWriter, r *http.Request, u parley.User) {
	ch, err := h.eng.Models(r.Context(), u)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.writeJSON(w, http.StatusOK, toModelsJSON(ch))
}

// setModelPreference takes {"connection", "model"}: both required keys,
// both "" to clear the choice. It answers with the list, as GET does.
func (h *Handler) setModelPreference(w http.ResponseWriter, r *http.Request, u parley.User) {
	var body struct {
		Connection *string `json:"connection"`
		Model      *string `json:"model"`
	}
	if !h.decode(w, r, &body) {
		return
	}
	switch {
	case body.Connection == nil || body.Model == nil:
		h.invalid(w, r, `"connection" and "model" are required (both "" clears the choice)`)
		return
	case hasNUL(*body.Connection):
		h.invalid(w, r, "connection contains a NUL character")
		return
	case hasNUL(*body.Model):
		h.invalid(w, r, "model contains a NUL character")
		return
	}
	if err := h.eng.SetModelPreference(r.Context(), u, *body.Connection, *body.Model); err != nil {
		h.fail(w, r, err)
		return
	}
	h.listModels(w, r, u)
}

// getAutoApprovals answers {"grants": [...]}: the tools, and
// "category:<name>"s, the user runs without an approval card.
func (h *Handler) getAutoApprovals(w http.ResponseWriter, r *http.Request, u parley.User) {
	gs, err := h.eng.AutoApprovals(r.Context(), u)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.writeJSON(w, http.StatusOK, map[string][]string{"grants": nonNil(gs)})
}

// setAutoApprovals takes {"grants": [...]}, the whole list ([] clears it),
// and answers as GET does.
func (h *Handler) setAutoApprovals(w http.ResponseWriter, r *http.Request, u parley.User) {
	var body struct {
		Grants *[]string `json:"grants"`
	}
	if !h.decode(w, r, &body) {
		return
	}
	if body.Grants == nil {
		h.invalid(w, r, `"grants" is required ([] clears them)`)
		return
	}
	gs, err := h.eng.SetAutoApprovals(r.Context(), u, *body.Grants)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.writeJSON(w, http.StatusOK, map[string][]string{"grants": nonNil(gs)})
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
