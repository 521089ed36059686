//go:build race

package sqlquota_test

const raceEnabled = true
