package apifailure

import (
	"errors"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// The table's names are unique, every row has both machines' columns, and
// Status says whether the error is an API status.
func TestTableIsWellFormed(t *testing.T) {
	seen := map[string]bool{}
	for _, f := range All() {
		if seen[f.Name] {
			t.Errorf("%s: named twice", f.Name)
		}
		seen[f.Name] = true
		if f.Reason == "" || f.Reflector == "" || f.RetryWatcher == "" {
			t.Errorf("%s: a column is empty: %+v", f.Name, f)
		}
		var st apierrors.APIStatus
		if got := errors.As(f.Err(0), &st); got != f.Status {
			t.Errorf("%s: Status = %v, but errors.As(APIStatus) = %v", f.Name, f.Status, got)
		}
		if g, ok := Lookup(f.Name); !ok || g.Name != f.Name {
			t.Errorf("Lookup(%q) = %+v, %v", f.Name, g, ok)
		}
	}
	if _, ok := Lookup("no such failure"); ok {
		t.Error("Lookup found a name that is not in the table")
	}
}
