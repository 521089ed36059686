package assistant

import (
	"testing"
	"unsafe"
)

// TestTurnFitsItsSizeClass holds the turn's struct, which every parked
// turn keeps, within the allocator's 3 KiB size class: the next classes
// are 3,200 and 3,456 bytes, then 4 KiB, where it was. The turn keeps the
// user message's id, not the row, and the writes point at the turn's
// reply instead of copying it.
func TestTurnFitsItsSizeClass(t *testing.T) {
	if got := unsafe.Sizeof(turn{}); got > 3072 {
		t.Errorf("turn is %d bytes, over the 3,072-byte size class", got)
	}
}
