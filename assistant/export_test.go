package assistant

import "time"

// The tests that wait out a store or ledger that keeps failing wait 3 s,
// not 10 (persistTimeout).
func init() { persistTimeout = 3 * time.Second }

// KeepEnd exposes keepEnd to the external tests.
var KeepEnd = keepEnd
