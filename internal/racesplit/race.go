//go:build race

package racesplit

// Race reports whether the binary was built with the race detector.
const Race = true
