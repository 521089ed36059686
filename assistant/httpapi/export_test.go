package httpapi

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
