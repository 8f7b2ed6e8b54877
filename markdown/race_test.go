//go:build race

package markdown

// raceDetector is whether the race detector is on: it changes what
// allocates (sync.Pool drops what it is given at random), so the
// allocation bounds do not hold under it.
const raceDetector = true
