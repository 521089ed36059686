// Package providers defines the interface between the Engine and a model:
// a Provider streams Events for a Request.
//
// Implementations live in subpackages: providers/openai speaks the OpenAI
// chat-completions protocol (OpenAI, Azure, vLLM, Ollama, OpenRouter, LM
// Studio); providers/fake is scripted and deterministic, for tests, examples
// and benchmarks. providers/providertest is the conformance suite every
// provider passes.
//
// # Errors
//
// A provider reports failure as the error element of its stream, an *Error
// carrying a Category. errors.Is matches the category sentinels (ErrAuth,
// ErrRateLimit, ...). The cause may contain provider text and must never be
// shown to an end user; the Engine shows only a category-based message.
//
// # Writing a Provider
//
// A driver over an SDK's event stream hands the stream to Assemble with a
// step function that yields text and reasoning deltas and records tool
// call fragments, usage and the finish reason on an Assembler. Assemble
// owns what every driver would otherwise repeat: tool calls assembled by
// index under MaxToolCallBytes, the order of the closing events, the
// error for a stream cut short, and closing the stream.
//
// # Concurrency
//
// A Provider is used by many turns at once and must be safe for concurrent
// use. Each sequence returned by Stream is single-use and is consumed by one
// goroutine.
package providers
