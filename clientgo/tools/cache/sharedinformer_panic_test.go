package cache

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/go-logr/logr/funcr"
	corev1 "k8s.io/api/core/v1"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/listwatch/listwatch/fake"
	"github.com/listwatch/listwatch/informer/informertest"
	"github.com/listwatch/listwatch/internal/testing/objects"
)

// A handler panic in the drop-in reaches client-go's panic handlers
// (utilruntime.PanicHandlers, which crash reporters hook): the default one
// logs "Observed a panic" with Run's logger, an added one sees the panic
// value. With utilruntime.ReallyCrash left true (client-go's default, under
// which client-go's informer would crash the process) the drop-in keeps
// going: only the call that panicked is lost. The log line names the line
// that panicked, as client-go's does (its TestEventPanics checks that).
func TestCompatHandlerPanicsReachPanicHandlers(t *testing.T) {
	var (
		mu       sync.Mutex
		reported []any
	)
	saved := utilruntime.PanicHandlers
	utilruntime.PanicHandlers = append(slices.Clip(saved), func(_ context.Context, r any) {
		mu.Lock()
		defer mu.Unlock()
		reported = append(reported, r)
	})
	t.Cleanup(func() { utilruntime.PanicHandlers = saved })
	if !utilruntime.ReallyCrash {
		t.Fatal("utilruntime.ReallyCrash is false: the test must show the drop-in does not crash when it is true")
	}
	synctest.Test(t, func(t *testing.T) {
		srv := fake.NewTestServer(t, fake.Options{})
		srv.Create(t.Context(), objects.ConfigMap("ns", "a", objects.Data("v", "0")))
		srv.Create(t.Context(), objects.ConfigMap("ns", "b", objects.Data("v", "0")))
		inf := NewSharedIndexInformer(srv.ListerWatcher(fake.LWOptions{Resource: cmGVR}), &corev1.ConfigMap{}, 0, nil)
		h := &informertest.ClientGoRecorder{}
		_, _, line, _ := runtime.Caller(0)
		panicLine := line + 5
		if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc: func(obj any) {
				if obj.(*corev1.ConfigMap).Name == "a" {
					panic("fake panic")
				}
				h.OnAdd(obj, false)
			},
		}); err != nil {
			t.Fatal(err)
		}
		var lines informertest.LogLines
		ctx, cancel := context.WithCancel(klog.NewContext(t.Context(), lines.LoggerWith(funcr.Options{LogCaller: funcr.All})))
		done := make(chan struct{})
		go func() { defer close(done); inf.RunWithContext(ctx) }()
		defer func() { cancel(); <-done }()
		if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
			t.Fatal("not synced")
		}
		synctest.Wait()
		srv.Create(t.Context(), objects.ConfigMap("ns", "c", objects.Data("v", "0")))
		synctest.Wait()

		if got, want := h.Take(), []string{"add b@2 initial=false", "add c@3 initial=false"}; !slices.Equal(got, want) {
			t.Fatalf("handler got %q, want %q", got, want)
		}
		mu.Lock()
		defer mu.Unlock()
		if !slices.Equal(reported, []any{"fake panic"}) {
			t.Fatalf("panic handlers got %q, want one \"fake panic\"", reported)
		}
		got := lines.Matching("Observed a panic")
		caller := fmt.Sprintf(`"caller"={"file"="sharedinformer_panic_test.go" "line"=%d}`, panicLine)
		// Run's logger as Run got it: client-go's log line has no name.
		if len(got) != 1 || !strings.Contains(got[0], caller) || !strings.Contains(got[0], "fake panic") ||
			strings.Contains(got[0], "*v1.ConfigMap") {
			t.Fatalf("Run's logger got %q, want one unnamed \"Observed a panic\" at %s", got, caller)
		}
	})
}

// Several handlers, each with its own logger (cache.HandlerOptions.Logger),
// panicking on every object: every panic reaches the panic handlers with
// that handler's logger, and each registration still syncs (client-go's
// never does when its handler panics on the initial list:
// kubernetes#129024).
func TestCompatHandlerPanicsWithHandlerLoggers(t *testing.T) {
	saved := utilruntime.PanicHandlers
	utilruntime.PanicHandlers = slices.Clip(saved)[:1] // logPanic alone
	t.Cleanup(func() { utilruntime.PanicHandlers = saved })
	synctest.Test(t, func(t *testing.T) {
		srv := fake.NewTestServer(t, fake.Options{})
		const nObjects = 5
		for i := range nObjects {
			srv.Create(t.Context(), objects.ConfigMap("ns", fmt.Sprint("o", i), objects.Data("v", "0")))
		}
		inf := NewSharedIndexInformer(srv.ListerWatcher(fake.LWOptions{Resource: cmGVR}), &corev1.ConfigMap{}, 0, nil)
		var lines informertest.LogLines
		base := lines.Logger()
		var regs []cache.ResourceEventHandlerRegistration
		for _, name := range []string{"handler-1", "handler-2"} {
			logger := base.WithName(name)
			reg, err := inf.AddEventHandlerWithOptions(cache.ResourceEventHandlerFuncs{
				AddFunc: func(any) { panic("fake panic") },
			}, cache.HandlerOptions{Logger: &logger})
			if err != nil {
				t.Fatal(err)
			}
			regs = append(regs, reg)
		}
		ctx, cancel := context.WithCancel(klog.NewContext(t.Context(), base.WithName("informer")))
		done := make(chan struct{})
		go func() { defer close(done); inf.RunWithContext(ctx) }()
		defer func() { cancel(); <-done }()
		if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
			t.Fatal("not synced")
		}
		synctest.Wait()
		for i, reg := range regs {
			if !reg.HasSynced() {
				t.Errorf("handler %d: registration not synced", i+1)
			}
		}
		for _, name := range []string{"handler-1", "handler-2"} {
			if n := len(lines.Matching(name + ` "msg"="Observed a panic"`)); n != nObjects {
				t.Errorf("%s: %d panics logged with its logger, want %d; log: %q", name, n, nObjects, lines.Matching(""))
			}
		}
	})
}
