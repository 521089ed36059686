package sqltest

import (
	"bytes"
	"runtime"
	"testing"
	"time"
)

// bgReadFrame is the function of pgx's background reader goroutine.
var bgReadFrame = []byte("pgconn/internal/bgreader.(*BGReader).bgRead(")

// Goroutines is the number of goroutines less pgx's background readers,
// for tests that check that no goroutine outlives what they started. Both
// counts come from one runtime.Stack dump, taken with the world stopped.
//
// pgx starts a background reader on a connection when a write to the
// server takes more than 15 ms, as it may on a busy machine, and the
// reader ends with its next read: on a connection left idle in a pool,
// when the pool next uses or closes it. So it belongs to a pooled
// connection, at most one each, not to the code a leak check is about; a
// check counting it failed on a loaded CI run (9 goroutines, want <= 8).
func Goroutines() int {
	buf := make([]byte, 64<<10)
	for {
		k := runtime.Stack(buf, true)
		if k < len(buf) {
			buf = buf[:k]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	// Each goroutine's trace starts with "goroutine N [...]:" on a line of
	// its own, the first at the start of the dump.
	n := bytes.Count(buf, []byte("\ngoroutine "))
	if bytes.HasPrefix(buf, []byte("goroutine ")) {
		n++
	}
	return n - bytes.Count(buf, bgReadFrame)
}

// SettleGoroutines waits, up to within, until Goroutines is at most base,
// calling each (which may be nil) before every count, and fails t with
// every goroutine's stack if it is not.
func SettleGoroutines(t testing.TB, base int, within time.Duration, each func()) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		if each != nil {
			each()
		}
		n := Goroutines()
		if n <= base {
			return
		}
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			k := runtime.Stack(buf, true)
			t.Fatalf("goroutines (less pgx's background readers): %d, want <= %d\n%s", n, base, buf[:k])
		}
		time.Sleep(5 * time.Millisecond)
	}
}
