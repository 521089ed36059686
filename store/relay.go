package store

import "context"

// MaxRelayPayload is the largest payload a Relay carries: 4 KiB, which
// leaves room under PostgreSQL's 8000-byte NOTIFY limit for the topic and
// an encoding that keeps every byte (NUL included) intact.
const MaxRelayPayload = 4096

// MaxRelayTopic is the longest topic a Relay accepts, in bytes. A topic is
// 1 to MaxRelayTopic bytes of printable ASCII other than space ('!'
// through '~').
const MaxRelayTopic = 128

// RelayBuffer is how many payloads a subscription holds for its reader
// before the Relay gives up on it (see Relay.Subscribe): enough for 4 MiB
// in payloads of MaxRelayPayload, the most a resumed stream replays at
// once, so a reader that takes a replay a little slower than it is
// published keeps up.
const RelayBuffer = 1088

// Relay passes short messages between the processes sharing the store, so
// that they need no other service to talk: the HTTP front end uses it to
// follow, on one instance, a stream that runs on another. It is optional,
// and a Store may implement it but not support it for its database
// (store/sqlstore supports it on PostgreSQL only), in which case Publish
// and Subscribe return an error wrapping errors.ErrUnsupported at once.
// Delivery is at most once: a payload published while nobody subscribes
// to its topic is gone.
//
// Implementations must be safe for concurrent use.
type Relay interface {
	// Publish sends payload to every subscriber of topic, in this process
	// or any other sharing the store, and returns once it is sent (not
	// received). Payloads one goroutine publishes on one topic reach each
	// subscriber in order. A topic that is not valid (see MaxRelayTopic)
	// or a payload longer than MaxRelayPayload is ErrInvalid. Publish
	// does not keep payload.
	Publish(ctx context.Context, topic string, payload []byte) error
	// Subscribe starts receiving topic's payloads and returns once
	// subscribed: every payload published after it returns reaches the
	// channel, unless the channel is closed first. The channel is closed
	// when ctx ends, and early when the subscription cannot go on without
	// losing payloads: its reader fell RelayBuffer payloads behind, or the
	// store lost its connection. A reader that must not miss payloads
	// treats an early close as a loss; one that needs the topic goes on
	// with a new subscription. An invalid topic is ErrInvalid; ctx ending
	// before it is subscribed is ctx's error. The channel's payloads are
	// the reader's own.
	Subscribe(ctx context.Context, topic string) (<-chan []byte, error)
}

// ValidRelayTopic reports whether topic is a topic a Relay accepts (see
// MaxRelayTopic).
func ValidRelayTopic(topic string) bool {
	if len(topic) == 0 || len(topic) > MaxRelayTopic {
		return false
	}
	for i := 0; i < len(topic); i++ {
		if topic[i] <= ' ' || topic[i] > '~' {
			return false
		}
	}
	return true
}
