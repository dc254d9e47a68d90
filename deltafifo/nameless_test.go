package deltafifo_test

import (
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/listwatch/deltafifo"
)

// TestNamelessKeys: a FIFO with Options.NamelessKeys queues objects
// without a name under client-go's keys ("namespace/", ""); without it,
// it refuses them.
func TestNamelessKeys(t *testing.T) {
	ctx := t.Context()
	nameless := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", GenerateName: "web-"}}
	cluster := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{GenerateName: "c-"}}

	strict := deltafifo.New(ctx, deltafifo.Options[*corev1.Pod]{})
	if err := strict.Add(nameless); !errors.Is(err, deltafifo.ErrInvalidObject) {
		t.Fatalf("default keys: %v, want ErrInvalidObject", err)
	}

	f := deltafifo.New(ctx, deltafifo.Options[*corev1.Pod]{NamelessKeys: true})
	for _, p := range []*corev1.Pod{nameless, cluster} {
		if err := f.Add(p); err != nil {
			t.Fatal(err)
		}
	}
	var keys []string
	for range 2 {
		if err := f.Pop(ctx, func(key string, _ []deltafifo.Delta[*corev1.Pod], _ bool) error {
			keys = append(keys, key)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	if len(keys) != 2 || keys[0] != "default/" || keys[1] != "" {
		t.Fatalf("popped keys %q, want [default/ \"\"]", keys)
	}
}
