//go:build !race

package store_test

// raceEnabled is true under -race, where allocation counts are not exact.
const raceEnabled = false
