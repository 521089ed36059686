package main

import (
	"slices"
	"testing"

	"github.com/parleyhq/parley/providers"
	"github.com/parleyhq/parley/providers/anthropic"
	"github.com/parleyhq/parley/providers/fake"
)

// The error-logging wrapper passes on the settings its provider honours:
// wrapped, an Anthropic connection must not advertise top_p (issue 25.7).
func TestCheckedProviderKeepsTheSettingsItsProviderHonours(t *testing.T) {
	inner := anthropic.New(anthropic.Config{APIKey: "k", Model: "m"})
	got := checkedProvider{Provider: inner}.Settings()
	if want := inner.Settings(); !slices.Equal(got, want) || slices.Contains(got, providers.SettingTopP) {
		t.Errorf("wrapped Anthropic honours %v, want %v", got, want)
	}
	if got := (checkedProvider{Provider: fake.New()}).Settings(); len(got) != 4 {
		t.Errorf("wrapped fake honours %v, want all four settings", got)
	}
}
