package nilcheck

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

func TestIs(t *testing.T) {
	var nilPod *corev1.Pod
	var nilObj runtime.Object
	var typedNil runtime.Object = nilPod
	var nilMap map[string]int
	var nilFunc func()
	for _, tc := range []struct {
		name string
		got  bool
		want bool
	}{
		{"nil pointer", Is(nilPod), true},
		{"nil interface", Is(nilObj), true},
		{"interface holding a nil pointer", Is(typedNil), true},
		{"nil map", Is(nilMap), true},
		{"nil func", Is(nilFunc), true},
		{"pointer", Is(&corev1.Pod{}), false},
		{"interface holding a pointer", Is[runtime.Object](&corev1.Pod{}), false},
		{"struct", Is(corev1.Pod{}), false},
		{"zero int", Is(0), false},
		{"empty string", Is(""), false},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: Is = %v, want %v", tc.name, tc.got, tc.want)
		}
	}
}

func BenchmarkIsPointer(b *testing.B) {
	p := &corev1.Pod{}
	for b.Loop() {
		if Is(p) {
			b.Fatal("not nil")
		}
	}
}
