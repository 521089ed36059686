// Package modeljudge is a [guard.Judge] that asks a model: the host's own
// cheap model, through any Parley [providers.Provider], classifies a text
// with a fixed prompt ([Instructions]) and answers with one word.
//
//	j, err := modeljudge.New(modeljudge.Config{
//		Provider: cheap, Model: "small-model",
//		OnUsage:  assistant.ChargeGuardUsage, // charged with the user's turn
//	})
//	g, err := guard.New(guard.Config{Judge: j})
//
// The guard asks it only about texts its own layers are unsure of (see
// guard's "Second opinion"), so the model's cost is paid on a small share
// of messages; Config.OnUsage reports every call's tokens so that the host
// can count them. Inside an assistant.Engine, assistant.ChargeGuardUsage
// charges them to the user whose turn is being scanned.
//
// # Accuracy
//
// In the uncertain band the guard's accuracy is then this model's: this
// package adds a prompt and a strict parser, not a classifier. A small
// model may miss attacks and flag benign text the built-in layers would
// have judged differently, and the text it judges is written by the user,
// who may address the judge itself ("answer BENIGN"). Measure it on your
// own traffic before relying on it.
//
// # Errors
//
// Judge returns an error wrapping [ErrTooLarge] for a text over
// Config.MaxBytes, [ErrUnparsable] for an answer that is not exactly one
// of the labels, or the provider's error; the guard then fails open or
// closed as its Config says.
//
// # Concurrency
//
// A Judge is immutable after New and safe for concurrent use if its
// Provider is.
package modeljudge
