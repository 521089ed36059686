package fake_test

import (
	"context"
	"fmt"

	"github.com/parleyhq/parley/providers"
	"github.com/parleyhq/parley/providers/fake"
)

func Example() {
	p := fake.New(
		fake.Turn{fake.CallTool("call_1", "get_weather", `{"city":"Paris"}`), fake.Usage(120, 12)},
		fake.Turn{fake.Text("It is ", "sunny ", "in Paris."), fake.Usage(150, 5)},
	)
	req := &providers.Request{Messages: []providers.Message{{Role: providers.User, Content: "Weather in Paris?"}}}
	for range 2 {
		for ev, err := range p.Stream(context.Background(), req) {
			if err != nil {
				fmt.Println("error:", err)
				break
			}
			switch ev.Kind {
			case providers.TextDelta:
				fmt.Printf("text %q\n", ev.Text)
			case providers.ToolCallEvent:
				fmt.Printf("call %s %s\n", ev.ToolCall.Name, ev.ToolCall.Args)
			case providers.UsageEvent:
				fmt.Printf("usage %d in, %d out\n", ev.Usage.InputTokens, ev.Usage.OutputTokens)
			case providers.FinishEvent:
				fmt.Println("finish", ev.Finish)
			}
		}
	}
	fmt.Println(len(p.Requests()), "requests")
	// Output:
	// call get_weather {"city":"Paris"}
	// usage 120 in, 12 out
	// finish tool_calls
	// text "It is "
	// text "sunny "
	// text "in Paris."
	// usage 150 in, 5 out
	// finish stop
	// 2 requests
}

// A Func step decides the reply from the request: here, an echo of the last
// message, answering every call.
func ExampleFunc() {
	echo := fake.Turn{fake.Func(func(_ context.Context, req *providers.Request) fake.Turn {
		last := req.Messages[len(req.Messages)-1]
		return fake.Turn{fake.Text("you said: ", last.Content)}
	})}
	p := fake.New()
	p.SetDefault(echo)
	for _, msg := range []string{"hi", "bye"} {
		req := &providers.Request{Messages: []providers.Message{{Role: providers.User, Content: msg}}}
		for ev := range p.Stream(context.Background(), req) {
			if ev.Kind == providers.TextDelta {
				fmt.Print(ev.Text)
			}
		}
		fmt.Println()
	}
	// Output:
	// you said: hi
	// you said: bye
}
