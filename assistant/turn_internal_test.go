package assistant

import (
	"testing"
	"unsafe"
)

// TestTurnFitsItsSizeClass holds the turn's struct, which every parked
// turn keeps, within the allocator's 2,304-byte size class: the next
// classes are 2,688 and 3,072 bytes, then 4 KiB, where it was. The turn
// keeps the user message's id, not the row; the writes point at the
// turn's reply instead of copying it; and of the admission it keeps only
// the replay and the topic filter's text.
func TestTurnFitsItsSizeClass(t *testing.T) {
	if got := unsafe.Sizeof(turn{}); got > 2304 {
		t.Errorf("turn is %d bytes, over the 2,304-byte size class", got)
	}
}
