package httpapi

// The tests that pass the replay limit stream past it: 1 MiB keeps them a
// quarter of the size they were at 4 MiB, the same under -race.
func init() { maxReplayBytes = 1 << 20 }

// ReplayLimit is maxReplayBytes as this package's tests see it.
func ReplayLimit() int { return maxReplayBytes }

// CopyLen returns the size of the resume copy of owner's stream id on
// transport ("ui" or "ndjson") running on h, or -1 when none runs there.
func CopyLen(h *Handler, transport, owner, id string) int {
	s := h.liveOf(transport).get(owner, id)
	if s == nil {
		return -1
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.buf)
}

// KeepWholeCopies turns h's compaction of its resume copies off: a copy
// then holds every byte its stream wrote, as before compaction.
func KeepWholeCopies(h *Handler) { h.uiLive.text, h.live.text = nil, nil }
