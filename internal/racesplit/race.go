//go:build race

package racesplit

const raceEnabled = true
