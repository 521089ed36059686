package fake_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley/providers"
	"github.com/parleyhq/parley/providers/fake"
	"github.com/parleyhq/parley/providers/providertest"
)

func TestConformance(t *testing.T) {
	providertest.Run(t, providertest.HarnessFunc(func(t *testing.T, s providertest.Scenario) providertest.Model {
		p := fake.New()
		p.SetDefault(turnFor(s))
		return providertest.Model{Provider: p, Received: p.Requests}
	}))
}

// turnFor renders a Scenario as a Turn. Faults of the transport become the
// errors a real provider reports for them.
func turnFor(s providertest.Scenario) fake.Turn {
	if s.Fault == providertest.FaultStatus {
		return fake.Turn{fake.Fail(&providers.Error{
			Category:   providers.CategoryForStatus(s.Status),
			StatusCode: s.Status,
			RetryAfter: s.RetryAfter,
			Err:        errors.New("fake: scripted HTTP status"),
		})}
	}
	var t fake.Turn
	if len(s.Reasoning) > 0 {
		t = append(t, fake.Reasoning(s.Reasoning...))
	}
	text := s.Text
	if s.Fault != providertest.NoFault {
		text = text[:min(s.FaultAfter, len(text))]
	}
	if len(text) > 0 {
		t = append(t, fake.Text(text...))
	}
	switch s.Fault {
	case providertest.FaultDrop, providertest.FaultMalformed:
		return append(t, fake.Fail(&providers.Error{Category: providers.CategoryConnection, Err: errors.New("fake: scripted " + s.Fault.String())}))
	case providertest.FaultStall:
		return append(t, fake.Delay(time.Hour))
	}
	for _, c := range s.ToolCalls {
		t = append(t, fake.CallTool(c.ID, c.Name, strings.Join(c.Args, "")))
	}
	t = append(t, fake.UsageOf(s.Usage))
	if s.Finish != "" {
		t = append(t, fake.Finish(s.Finish))
	}
	return t
}
