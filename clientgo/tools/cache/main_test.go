package cache

import (
	"errors"
	"slices"
	"testing"

	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"

	"github.com/listwatch/listwatch/fake"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var cmGVR = fake.ConfigMaps().GVR

var errBoom = errors.New("boom")

func names(pods []*corev1.Pod) []string {
	out := make([]string, 0, len(pods))
	for _, p := range pods {
		out = append(out, p.Namespace+"/"+p.Name)
	}
	slices.Sort(out)
	return out
}

// sameTranscripts fails t unless the "listwatch" and "client-go"
// transcripts of a differential test are equal, and logs the transcript.
func sameTranscripts(t *testing.T, transcripts map[string][]string) {
	t.Helper()
	a, b := transcripts["listwatch"], transcripts["client-go"]
	if !slices.Equal(a, b) {
		t.Fatalf("transcripts differ:\nlistwatch %q\nclient-go %q", a, b)
	}
	t.Logf("transcript: %q", a)
}

// missDeletion deletes the ConfigMap ns/name while the server is down and
// compacts the deletion away: a client sees it only by listing again.
func missDeletion(t *testing.T, srv *fake.Server, name string) {
	t.Helper()
	ctx := t.Context()
	srv.Down()
	obj, err := srv.Get(ctx, cmGVR, "ns", name)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Delete(ctx, obj); err != nil {
		t.Fatal(err)
	}
	if err := srv.Compact(srv.ResourceVersion()); err != nil {
		t.Fatal(err)
	}
	srv.Up()
}
