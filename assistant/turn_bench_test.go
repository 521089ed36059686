package assistant_test

import (
	"context"
	"testing"

	"github.com/parleyhq/parley/assistant"
	"github.com/parleyhq/parley/blocks"
	"github.com/parleyhq/parley/providers"
	"github.com/parleyhq/parley/providers/fake"
	"github.com/parleyhq/parley/store/memstore"
)

// BenchmarkTurn measures the allocations of a turn with one tool call and
// its answer, over the fake provider, with telemetry left to the otel
// globals (no SDK installed): what a host that configures none pays.
func BenchmarkTurn(b *testing.B) { benchTurn(b, nil) }

func benchTurn(b *testing.B, mod func(*assistant.Config)) {
	p := fake.New()
	p.SetDefault(fake.Turn{fake.Func(func(_ context.Context, req *providers.Request) fake.Turn {
		if req.Messages[len(req.Messages)-1].Role == providers.Tool {
			return fake.Turn{fake.Text("It is sunny ", "in Oslo."), fake.Usage(120, 8)}
		}
		return fake.Turn{fake.CallTool("c1", "get_weather", `{"city":"Oslo"}`), fake.Usage(100, 10)}
	})})
	h := newHarness(b, p)
	cfg := assistant.Config{Provider: p, Store: memstore.New(), Tools: h.registry(), Authorizer: assistant.RoleAuthorizer{Everyone: []string{"*"}}}
	if mod != nil {
		mod(&cfg)
	}
	eng, err := assistant.New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		for blk := range eng.Stream(context.Background(), alice, assistant.Request{Message: "weather in Oslo?"}) {
			if blk.Kind == blocks.Error {
				b.Fatal(blk.Content)
			}
		}
	}
}
