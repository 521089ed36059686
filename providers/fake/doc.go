// Package fake is a scripted, deterministic providers.Provider for tests,
// runnable examples and benchmarks.
//
// A Provider answers each Stream call with the next Turn of its script. A
// Turn is a list of steps:
//
//	p := fake.New(
//		fake.Turn{fake.CallTool("call_1", "get_weather", `{"city":"Paris"}`), fake.Usage(120, 12)},
//		fake.Turn{fake.Text("It is ", "sunny."), fake.Usage(150, 5)},
//	)
//
// Text and Reasoning emit one delta per chunk, CallTool one complete call,
// Usage one UsageEvent; every turn ends with a FinishEvent whose reason is
// derived (tool_calls after a CallTool, else stop) unless Finish sets it.
// Fail ends the stream with an error, Delay pauses it (honouring the
// context) and Func decides the turn from the request when the call
// arrives.
//
// # Errors
//
// A call beyond the script yields a *providers.Error of CategoryBadRequest
// wrapping ErrExhausted, unless SetDefault set a turn for such calls. Fail
// yields its error as a *providers.Error, classifying it first if needed, so
// a test can script any category: fake.Fail(&providers.Error{Category:
// providers.CategoryRateLimit, RetryAfter: time.Second}). A context that
// ends during a Delay, or before the call, yields CategoryCanceled or
// CategoryTimeout.
//
// # Assertions
//
// Requests returns copies of the requests received, in call order, so a
// test can check what the Engine sent to the model.
//
// # Concurrency
//
// A Provider is safe for concurrent use; concurrent calls take turns in the
// order they start iterating.
package fake
