package mapreuse

import "testing"

func TestTrackerDecisions(t *testing.T) {
	tr := Tracker{Big: 100}
	fill := func(n int) Action {
		t.Helper()
		for i := 1; i <= n; i++ {
			tr.Note(i)
		}
		return tr.Emptied()
	}
	steps := []struct {
		fill int
		want Action
		why  string
	}{
		{50, Keep, "a small map"},
		{50, Keep, "still small"},
		{500, Replace, "the first big fill (an initial list)"},
		{300, Clear, "two big fills in a row"},
		{400, Clear, "big fills keep coming"},
		{90, Replace, "a small fill after big ones: the big map goes"},
		{90, Keep, "small again, in a small map"},
	}
	for i, s := range steps {
		if got := fill(s.fill); got != s.want {
			t.Fatalf("step %d (%s): fill %d -> %v, want %v", i, s.why, s.fill, got, s.want)
		}
	}
	if tr.Peak() != 90 {
		t.Fatalf("peak %d after a replace and a fill of 90, want 90", tr.Peak())
	}
	if got := tr.Emptied(); got != Keep {
		t.Fatalf("a second Emptied with nothing noted: %v, want Keep", got)
	}
}

// A fill far below the map's peak replaces it even after big fills: a map
// cleared and kept must not stay much larger than what fills it.
func TestTrackerReplacesAMapMuchLargerThanItsFills(t *testing.T) {
	tr := Tracker{Big: 100}
	for _, n := range []int{1000, 1000} {
		tr.Note(n)
		tr.Emptied()
	}
	tr.Note(200) // big, but a fifth of the peak
	if got := tr.Emptied(); got != Replace {
		t.Fatalf("fill 200 after a peak of 1000: %v, want Replace", got)
	}
	tr.Note(200)
	tr.Emptied()
	tr.Note(200)
	if got := tr.Emptied(); got != Clear {
		t.Fatalf("fills of 200 after the new map: %v, want Clear", got)
	}
}

func TestTrackerReset(t *testing.T) {
	tr := Tracker{Big: 10}
	tr.Note(50)
	tr.Reset()
	if tr.Peak() != 0 || tr.Big != 10 || tr.Emptied() != Keep {
		t.Fatalf("after Reset: peak %d, Big %d", tr.Peak(), tr.Big)
	}
}
