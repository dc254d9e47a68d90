package objname

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestOf(t *testing.T) {
	for _, tc := range []struct {
		meta metav1.ObjectMeta
		want string
	}{
		{metav1.ObjectMeta{Namespace: "ns", Name: "a"}, "ns/a"},
		{metav1.ObjectMeta{Name: "node-1"}, "node-1"},
		{metav1.ObjectMeta{Namespace: "ns"}, "ns/"},
		{metav1.ObjectMeta{}, ""},
	} {
		if got := Of(&corev1.ConfigMap{ObjectMeta: tc.meta}); got != tc.want {
			t.Errorf("Of(%+v) = %q, want %q", tc.meta, got, tc.want)
		}
	}
}
