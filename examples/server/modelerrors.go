package main

import (
	"context"
	"iter"
	"log/slog"

	"github.com/parleyhq/parley/providers"
)

// checkedProvider is a connection's provider that logs, at Error, every
// call the model server refuses for its credentials or its model, naming
// the connection and the variables to fix. Without it a wrong key or a
// misspelt model shows only as the Engine's Warn "model call failed", and
// the user reads "try again later".
type checkedProvider struct {
	providers.Provider
	connection string
	keyVars    string // the variables that set the key
	modelVars  string // the variables that name the model, and the endpoint
	log        *slog.Logger
}

func (p checkedProvider) Stream(ctx context.Context, req *providers.Request) iter.Seq2[providers.Event, error] {
	return func(yield func(providers.Event, error) bool) {
		for ev, err := range p.Provider.Stream(ctx, req) {
			if err != nil {
				p.report(req.Model, err)
			}
			if !yield(ev, err) {
				return
			}
		}
	}
}

// Settings passes on the settings the wrapped provider honours (see
// providers.SettingsProvider): the wrapper must not widen them.
func (p checkedProvider) Settings() []string {
	if sp, ok := p.Provider.(providers.SettingsProvider); ok {
		return sp.Settings()
	}
	return []string{providers.SettingTemperature, providers.SettingTopP, providers.SettingMaxTokens, providers.SettingReasoningEffort}
}

// report logs err if it is a configuration error: the key (auth) or the
// model or route (not_found). Other failures are the Engine's to report.
func (p checkedProvider) report(model string, err error) {
	switch providers.CategoryOf(err) {
	case providers.CategoryAuth:
		p.log.Error("the model server refused the API key: check "+p.keyVars,
			"connection", p.connection, "model", model, "err", err)
	case providers.CategoryNotFound:
		p.log.Error("the model server has no such model or route: check "+p.modelVars,
			"connection", p.connection, "model", model, "err", err)
	}
}
