//go:build !race

package racesplit

const raceEnabled = false
