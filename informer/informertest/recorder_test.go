package informertest

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/listwatch/listwatch/internal/testing/objects"
)

func TestRecorderLines(t *testing.T) {
	r := &Recorder[*corev1.ConfigMap]{}
	r.OnAdd(objects.ConfigMap("ns", "a", objects.RV("1")), true)
	r.OnUpdate(objects.ConfigMap("ns", "a", objects.RV("1")), objects.ConfigMap("ns", "a", objects.RV("2")))
	r.OnDelete(objects.ConfigMap("ns", "a", objects.RV("2")), true)
	r.OnMovedAway(objects.ConfigMap("ns", "b", objects.RV("2")))
	r.ExpectExactly(t, "add a@1 initial=true", "update a@1->2", "delete a@2 unknown=true", "moved b@2")
	if got := r.Take(); len(got) != 0 {
		t.Fatalf("ExpectExactly left %q", got)
	}
	r.OnAdd(objects.ConfigMap("ns", "b", objects.RV("3")), false)
	r.OnAdd(objects.ConfigMap("ns", "c", objects.RV("4")), false)
	r.OnAdd(objects.ConfigMap("ns", "d", objects.RV("5")), false)
	r.Expect(t, "add b@3 initial=false", "add d@5 initial=false")
}

// A ClientGoRecorder writes Recorder's lines; a tombstone is its object
// with unknown=true, an object without metadata its type.
func TestClientGoRecorderLines(t *testing.T) {
	r := &ClientGoRecorder{}
	r.OnAdd(objects.ConfigMap("ns", "a", objects.RV("1")), true)
	r.OnUpdate(objects.ConfigMap("ns", "a", objects.RV("1")), objects.ConfigMap("ns", "a", objects.RV("2")))
	r.OnDelete(objects.ConfigMap("ns", "a", objects.RV("2")))
	r.OnDelete(cache.DeletedFinalStateUnknown{Key: "ns/b", Obj: objects.ConfigMap("ns", "b", objects.RV("3"))})
	r.OnAdd(42, false)
	r.ExpectExactly(t, "add a@1 initial=true", "update a@1->2", "delete a@2 unknown=false", "delete b@3 unknown=true", "add int@ initial=false")
	typed := &Recorder[*corev1.ConfigMap]{}
	typed.OnAdd(objects.ConfigMap("ns", "a", objects.RV("1")), true)
	typed.OnUpdate(objects.ConfigMap("ns", "a", objects.RV("1")), objects.ConfigMap("ns", "a", objects.RV("2")))
	typed.OnDelete(objects.ConfigMap("ns", "b", objects.RV("3")), true)
	r.OnAdd(objects.ConfigMap("ns", "a", objects.RV("1")), true)
	r.OnUpdate(objects.ConfigMap("ns", "a", objects.RV("1")), objects.ConfigMap("ns", "a", objects.RV("2")))
	r.OnDelete(cache.DeletedFinalStateUnknown{Key: "ns/b", Obj: objects.ConfigMap("ns", "b", objects.RV("3"))})
	want := typed.Take()
	r.ExpectExactly(t, want...)
	r.OnAdd(objects.ConfigMap("ns", "c", objects.RV("4")), false)
	r.OnAdd(objects.ConfigMap("ns", "d", objects.RV("5")), false)
	r.Expect(t, "add d@5 initial=false")
	if got := r.Take(); len(got) != 0 {
		t.Fatalf("Expect left %q", got)
	}
}

func TestIsSubsequence(t *testing.T) {
	for _, tc := range []struct {
		want, got []string
		ok        bool
	}{
		{nil, nil, true},
		{[]string{"a"}, nil, false},
		{[]string{"a", "c"}, []string{"a", "b", "c"}, true},
		{[]string{"c", "a"}, []string{"a", "b", "c"}, false},
		{[]string{"a", "a"}, []string{"a"}, false},
	} {
		if got := isSubsequence(tc.want, tc.got); got != tc.ok {
			t.Errorf("isSubsequence(%q, %q) = %v", tc.want, tc.got, got)
		}
	}
}
