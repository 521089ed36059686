// Package providertest is the conformance suite every providers.Provider
// passes, in the manner of gocloud's drivertest and testing/slogtest.
//
// A provider package runs it in a few lines, with a Harness that turns a
// provider-neutral Scenario into a provider that will play it, backed by a
// local mock server or a script:
//
//	func TestConformance(t *testing.T) {
//		providertest.Run(t, providertest.HarnessFunc(func(t *testing.T, s providertest.Scenario) providertest.Model {
//			p := fake.New()
//			p.SetDefault(turnFor(s)) // the Scenario as a fake.Turn
//			return providertest.Model{Provider: p, Received: p.Requests}
//		}))
//	}
//
// providers/openai's harness serves the Scenario from internal/openaimock
// over httptest and translates the request the server decoded back into a
// providers.Request.
//
// # What it checks
//
//   - Text arrives as TextDelta events in order, reasoning as ReasoningDelta
//     before it; then exactly one UsageEvent and one FinishEvent, which is
//     last. Parallel tool calls arrive as complete ToolCallEvents (arguments
//     assembled) in order, with FinishToolCalls.
//   - The system prompt, history (assistant tool calls and tool results),
//     tool definitions, model, MaxTokens and Temperature reach the model
//     unchanged, and Stream does not modify the Request.
//   - Failures are *providers.Error values matched with errors.Is: HTTP 401
//     is ErrAuth, 404 ErrNotFound, 429 ErrRateLimit with RetryAfter from
//     the server, 500 ErrUnavailable; a dropped or malformed stream is
//     ErrConnection after delivering the text before the fault; a canceled
//     context is ErrCanceled and an expired one ErrTimeout, promptly even
//     when the server has gone quiet. An error is the last element.
//   - Breaking out of the loop returns promptly and leaves no goroutine
//     behind; concurrent streams do not interfere.
//
// ParkedStreamsHoldNoRequest, run apart from the suite against a
// StallServer, checks what a stream holds while the model talks: none of
// its request.
//
// # Writing a Harness
//
// MakeModel is called once per subtest and must return a fresh provider
// whose every Stream call plays the Scenario. A harness that cannot produce
// a Scenario (a fault its transport cannot simulate) calls t.Skip; one that
// cannot observe requests leaves Model.Received nil. The suite does not run
// subtests in parallel, because the goroutine check counts the whole
// process.
package providertest
