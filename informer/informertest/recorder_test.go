package informertest

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
)

func cm(name, rv string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, ResourceVersion: rv}}
}

func TestRecorderLines(t *testing.T) {
	r := &Recorder[*corev1.ConfigMap]{}
	r.OnAdd(cm("a", "1"), true)
	r.OnUpdate(cm("a", "1"), cm("a", "2"))
	r.OnDelete(cm("a", "2"), true)
	r.OnMovedAway(cm("b", "2"))
	r.ExpectExactly(t, "add a@1 initial=true", "update a@1->2", "delete a@2 unknown=true", "moved b@2")
	if got := r.Take(); len(got) != 0 {
		t.Fatalf("ExpectExactly left %q", got)
	}
	r.OnAdd(cm("b", "3"), false)
	r.OnAdd(cm("c", "4"), false)
	r.OnAdd(cm("d", "5"), false)
	r.Expect(t, "add b@3 initial=false", "add d@5 initial=false")
}

// A ClientGoRecorder writes Recorder's lines; a tombstone is its object
// with unknown=true, an object without metadata its type.
func TestClientGoRecorderLines(t *testing.T) {
	r := &ClientGoRecorder{}
	r.OnAdd(cm("a", "1"), true)
	r.OnUpdate(cm("a", "1"), cm("a", "2"))
	r.OnDelete(cm("a", "2"))
	r.OnDelete(cache.DeletedFinalStateUnknown{Key: "ns/b", Obj: cm("b", "3")})
	r.OnAdd(42, false)
	r.ExpectExactly(t, "add a@1 initial=true", "update a@1->2", "delete a@2 unknown=false", "delete b@3 unknown=true", "add int@ initial=false")
	typed := &Recorder[*corev1.ConfigMap]{}
	typed.OnAdd(cm("a", "1"), true)
	typed.OnUpdate(cm("a", "1"), cm("a", "2"))
	typed.OnDelete(cm("b", "3"), true)
	r.OnAdd(cm("a", "1"), true)
	r.OnUpdate(cm("a", "1"), cm("a", "2"))
	r.OnDelete(cache.DeletedFinalStateUnknown{Key: "ns/b", Obj: cm("b", "3")})
	want := typed.Take()
	r.ExpectExactly(t, want...)
	r.OnAdd(cm("c", "4"), false)
	r.OnAdd(cm("d", "5"), false)
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
