//go:build !race

package informer

// raceEnabled is true under -race, where allocation counts are not exact.
const raceEnabled = false
