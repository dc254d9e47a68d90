package informer

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/listwatch/listwatch/informer/informertest"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
)

// A handler registered before Run logs its panics with the logger of Run's
// context (it was created when the informer had only a discard logger), as
// does one added after Run; one with its own logger keeps it.
func TestHandlerPanicsLoggedWithRunLogger(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, Options[*corev1.ConfigMap]{Name: "cms"})
		e.create(t, "a")
		boom := HandlerFuncs[*corev1.ConfigMap]{AddFunc: func(c *corev1.ConfigMap, _ bool) { panic("boom " + c.Name) }}
		early, err := e.inf.AddHandler(boom, HandlerOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var runLog, ownLog informertest.LogLines
		own := ownLog.Logger()
		if _, err := e.inf.AddHandler(boom, HandlerOptions{Logger: &own}); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(klog.NewContext(t.Context(), runLog.Logger()))
		done := make(chan struct{})
		go func() { defer close(done); _ = e.inf.Run(ctx) }()
		defer func() { cancel(); <-done }()
		e.waitRV(t)
		late, err := e.inf.AddHandler(boom, HandlerOptions{})
		if err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if got := early.Stats().Panics + late.Stats().Panics; got != 2 {
			t.Fatalf("%d panics counted, want 2", got)
		}
		got := runLog.Matching("event handler panicked")
		if len(got) != 2 || !strings.Contains(got[0], `"key"="ns/a"`) || !strings.Contains(got[0], "boom a") ||
			!strings.Contains(got[0], `cms`) {
			t.Fatalf("Run's logger got %q, want two panics of ns/a from informer cms", got)
		}
		if got := ownLog.Matching("event handler panicked"); len(got) != 1 {
			t.Fatalf("the handler's own logger got %q, want its one panic", got)
		}
	})
}
