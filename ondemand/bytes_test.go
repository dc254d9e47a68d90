package ondemand_test

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/listwatch/listwatch/fake"
	"github.com/listwatch/listwatch/internal/testing/heapattr"
	"github.com/listwatch/listwatch/ondemand"
)

// TestBytesMatchTheHeap holds the account of bytes to the heap: what the
// metadata cache and the held objects take, as Stats reports them, is
// within 15% of what a heap profile attributes to them.
func TestBytesMatchTheHeap(t *testing.T) {
	if testing.Short() {
		t.Skip("measures the heap")
	}
	srv := fake.NewTestServer(t, fake.Options{Resources: []fake.Resource{secrets}})
	const n = 3000
	for i := range n {
		s := secret(fmt.Sprintf("ns-%d", i%10), name(i), strings.Repeat("x", 100+(i*37)%4000),
			map[string]string{"app": fmt.Sprint("app-", i%50), "owner": "helm"})
		s.Annotations = map[string]string{"meta.helm.sh/release-name": fmt.Sprint("release-", i)}
		create(t, srv, s)
	}
	heapattr.Sample(t)
	before := attributed(t)
	e := start(t, t.Context(), srv, ondemand.Options[*corev1.Secret]{Budget: ondemand.Unlimited})
	synced := attributed(t)
	st := e.cache.Stats()
	check(t, "metadata", st.MetadataBytes, synced-before)
	for i := 0; i < n; i += 2 {
		if _, err := e.cache.Get(t.Context(), fmt.Sprintf("ns-%d", i%10), name(i)); err != nil {
			t.Fatal(err)
		}
	}
	read := attributed(t)
	st = e.cache.Stats()
	if st.Held != n/2 {
		t.Fatalf("%d held; want %d", st.Held, n/2)
	}
	check(t, "held", st.HeldBytes, read-synced)
	runtime.KeepAlive(e)
}

// attributed is what the heap profile attributes to everything but the
// fake server (which holds the server's copy of every Secret, and whose
// watches buffer events). client-go decodes the metadata informer's
// watch in a goroutine of its own, with no listwatch frame on its
// stacks: the test takes differences, not listwatch's frames.
func attributed(t *testing.T) int64 {
	return heapattr.Live(t, "", "github.com/listwatch/listwatch/fake")
}

func check(t *testing.T, what string, reported, measured int64) {
	t.Helper()
	ratio := float64(reported) / float64(measured)
	t.Logf("%s: reported %d bytes, the heap profile attributes %d: %.2fx", what, reported, measured, ratio)
	if ratio < 0.85 || ratio > 1.15 {
		t.Errorf("%s: reported %d bytes, the heap profile attributes %d (%.2fx): outside ±15%%", what, reported, measured, ratio)
	}
}
