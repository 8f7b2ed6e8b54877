//go:build !race

package markdown

// raceDetector is whether the race detector is on (race_test.go).
const raceDetector = false
