package main

import (
	"strings"
	"testing"
)

const fixtures = "hack/clientgo-reexport/testdata/"

func generateFixture(t *testing.T, dir, upstream string) (*result, error) {
	t.Helper()
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	rs, err := run(root, []target{{fixtures + dir, upstream}})
	if err != nil {
		return nil, err
	}
	return rs[0], nil
}

// TestOverrides: each accepted kind of hand-written declaration is left out
// of the generated file and reported with its verdict; the file type-checks
// with the hand-written one (run fails otherwise).
func TestOverrides(t *testing.T) {
	r, err := generateFixture(t, "good", "k8s.io/client-go/util/workqueue")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]verdict{
		"NewTyped":            verdictIdentical,
		"QueueConfig":         verdictIdentical,
		"TypedInterface":      verdictIdentical,
		"NewMaxOfRateLimiter": verdictAssignable,
		"GaugeMetric":         verdictMethodSet,
	}
	got := map[string]verdict{}
	for _, o := range r.Overrides {
		got[o.Name] = o.Verdict
	}
	if len(got) != len(want) {
		t.Errorf("overrides %v, want %v", got, want)
	}
	for name, v := range want {
		if g, ok := got[name]; !ok || g != v {
			t.Errorf("%s: verdict %v (present %v), want %v", name, g, ok, v)
		}
		if topNames(r.Source)[name] {
			t.Errorf("%s is hand-written but the generated file declares it too", name)
		}
	}
	src := string(r.Source)
	for _, s := range []string{
		"//   - NewMaxOfRateLimiter: ASSIGNABLE, not identical: result 1 is\n//     *k8s.io/client-go/util/workqueue.TypedMaxOfRateLimiter[any]",
		"//   - GaugeMetric: A DISTINCT interface type",
		"//   - NewTyped: identical signature\n",
		// QueueConfig is hand-written, so wrappers naming it name
		// client-go's types, not the local ones.
		"func NewWithConfig(config workqueue.QueueConfig) *workqueue.Type {",
	} {
		if !strings.Contains(src, s) {
			t.Errorf("generated file lacks %q:\n%s", s, src)
		}
	}
	if missing := r.missingFrom(r.Source); len(missing) > 0 {
		t.Errorf("missing %v", missing)
	}
}

// TestMismatches: a hand-written declaration that differs from client-go's
// fails the generation, each named.
func TestMismatches(t *testing.T) {
	_, err := generateFixture(t, "bad", "k8s.io/client-go/util/workqueue")
	if err == nil {
		t.Fatal("no error")
	}
	for _, s := range []string{
		"NewNamed: signature func(name string, size int)",
		// A struct replaced without client-go's exported fields.
		"QueueConfig: replaced by github.com/listwatch/listwatch/hack/clientgo-reexport/testdata/bad.QueueConfig, which lacks client-go's exported fields, whose code may read or set them: MetricsProvider k8s.io/client-go/util/workqueue.MetricsProvider (absent); Clock k8s.io/utils/clock.WithTicker (absent); Queue k8s.io/client-go/util/workqueue.Queue[any] (absent)",
		"ParallelizeUntil: client-go's is a function, this one a variable",
		"NewTyped: signature func[T comparable]() k8s.io/client-go/util/workqueue.TypedInterface[T]",
	} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error lacks %q:\n%v", s, err)
		}
	}
}

// TestWrappers: generic wrappers instantiate client-go's function
// explicitly, variadic arguments are passed on with ..., a function whose
// signature names an unexported type or that looks at its caller is held
// in a variable, deprecations carry over, client-go's own package yields
// its import name to apimachinery's where both are watch.
func TestWrappers(t *testing.T) {
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	rs, err := run(root, []target{
		{fixtures + "none-workqueue", "k8s.io/client-go/util/workqueue"},
		{fixtures + "none-watch", "k8s.io/client-go/tools/watch"},
		{fixtures + "none-cache", "k8s.io/client-go/tools/cache"},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ pkg, want string }{
		{"workqueue", "func NewTypedMaxOfRateLimiter[T comparable](limiters ...TypedRateLimiter[T]) TypedRateLimiter[T] {\n\treturn workqueue.NewTypedMaxOfRateLimiter[T](limiters...)\n}"},
		{"workqueue", "func ParallelizeUntil(ctx context.Context, workers int, pieces int, doWorkPiece DoWorkPieceFunc, opts ...Options) {\n\tworkqueue.ParallelizeUntil(ctx, workers, pieces, doWorkPiece, opts...)\n}"},
		{"workqueue", "type TypedRateLimitingInterface[T comparable] = workqueue.TypedRateLimitingInterface[T]\n"},
		{"workqueue", "var WithChunkSize = workqueue.WithChunkSize\n"},
		{"workqueue", "//   - WithChunkSize: a variable holding client-go's function: its signature names\n//     unexported k8s.io/client-go/util/workqueue.options"},
		{"workqueue", "// Deprecated: client-go deprecates [workqueue.NewNamed]; see its documentation.\nfunc NewNamed("},
		{"watch", "\t\"k8s.io/apimachinery/pkg/watch\"\n"},
		{"watch", "\tcgwatch \"k8s.io/client-go/tools/watch\"\n"},
		{"watch", "var ErrWatchClosed = cgwatch.ErrWatchClosed\n"},
		{"watch", "func Until(ctx context.Context, initialResourceVersion string, watcherClient cache.Watcher, conditions ...ConditionFunc) (*watch.Event, error) {\n\treturn cgwatch.Until(ctx, initialResourceVersion, watcherClient, conditions...)\n}"},
		// WaitFor logs its caller's line: a wrapper would be the caller.
		{"cache", "var WaitFor = cache.WaitFor\n"},
		{"cache", "//   - WaitFor: a variable holding client-go's function: it looks at its caller (it\n//     calls WithCallStackHelper"},
	} {
		src := string(rs[map[string]int{"workqueue": 0, "watch": 1, "cache": 2}[c.pkg]].Source)
		if !strings.Contains(src, c.want) {
			t.Errorf("%s: generated file lacks %q", c.pkg, c.want)
		}
	}
	// A name dropped from the file is reported as missing, as make
	// clientgo-check does after a client-go bump adds one.
	stale := strings.Replace(string(rs[0].Source), "func NewTypedMaxOfRateLimiter[", "func renamed[", 1)
	if got := rs[0].missingFrom([]byte(stale)); len(got) != 1 || got[0] != "NewTypedMaxOfRateLimiter" {
		t.Errorf("missingFrom = %v, want [NewTypedMaxOfRateLimiter]", got)
	}
}

// TestUnknownVariable: an exported variable without a decision in
// varPolicies fails the generation.
func TestUnknownVariable(t *testing.T) {
	key := "k8s.io/client-go/tools/watch.ErrWatchClosed"
	saved := varPolicies[key]
	delete(varPolicies, key)
	t.Cleanup(func() { varPolicies[key] = saved })
	_, err := generateFixture(t, "none-watch", "k8s.io/client-go/tools/watch")
	if err == nil || !strings.Contains(err.Error(), key+" is an exported variable") {
		t.Fatalf("err = %v", err)
	}
}

func TestComment(t *testing.T) {
	got := comment(strings.Repeat("word ", 20), "Deprecated: x.")
	want := "// word word word word word word word word word word word word word word word\n" +
		"// word word word word word\n//\n// Deprecated: x.\n"
	if got != want {
		t.Errorf("comment =\n%s\nwant\n%s", got, want)
	}
}

// TestReplacedTypes: listwatch's own types stand for client-go's opaque
// ones (struct types used only through their methods) in the real
// packages, and the constructors that return them are accepted as
// replaced; a struct with exported fields is replaced only by a type with
// each of them (TestReplacedStructWithFields; TestMismatches: QueueConfig).
func TestReplacedTypes(t *testing.T) {
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	rs, err := run(root, targets)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]verdict{}
	for _, r := range rs {
		for _, o := range r.Overrides {
			got[r.Dir+"."+o.Name] = o.Verdict
		}
	}
	for _, name := range []string{
		"clientgo/util/workqueue.Typed", "clientgo/util/workqueue.Type", "clientgo/util/workqueue.NewTyped",
		"clientgo/tools/watch.RetryWatcher", "clientgo/tools/watch.NewRetryWatcherWithContext",
		"clientgo/tools/cache.DeltaFIFO", "clientgo/tools/cache.NewDeltaFIFOWithOptions",
	} {
		if v, ok := got[name]; !ok || v != verdictReplaced {
			t.Errorf("%s: verdict %v (present %v), want replaced", name, v, ok)
		}
	}
}

// TestReplacedStructWithFields: a replacement of a struct with exported
// fields that has each of them with client-go's type (and every method) is
// REPLACED, its conflicts decided in conflictPolicies are reported; one
// whose fields differ fails, each field named.
func TestReplacedStructWithFields(t *testing.T) {
	r, err := generateFixture(t, "fields-good", "k8s.io/client-go/tools/cache")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]verdict{}
	for _, o := range r.Overrides {
		got[o.Name] = o.Verdict
	}
	for _, name := range []string{"Reflector", "NewReflector", "NewReflectorWithOptions", "NewNamedReflector", "NewNamespaceKeyedIndexerAndReflector"} {
		if got[name] != verdictReplaced {
			t.Errorf("%s: verdict %v, want replaced", name, got[name])
		}
	}
	// The header's lines, unwrapped.
	src := strings.ReplaceAll(string(r.Source), "\n//     ", " ")
	for _, s := range []string{
		"which has every exported field (identical types) and method of client-go's type",
		"CONFLICT, decided: client-go's DefaultWatchErrorHandler, WatchErrorHandler, WatchErrorHandlerWithContext still name client-go's type",
		// The handler types stay client-go's.
		"type WatchErrorHandler = cache.WatchErrorHandler\n",
	} {
		if !strings.Contains(src, s) {
			t.Errorf("generated file lacks %q:\n%s", s, src[:min(len(src), 3000)])
		}
	}

	_, err = generateFixture(t, "fields-bad", "k8s.io/client-go/tools/cache")
	want := "Reflector: replaced by github.com/listwatch/listwatch/hack/clientgo-reexport/testdata/fields-bad.Reflector, which lacks client-go's exported fields, whose code may read or set them: " +
		"WatchListPageSize int (client-go's int64); MaxInternalErrorRetryDuration time.Duration (absent)"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("err = %v, want it to contain %q", err, want)
	}
}

// TestReplacedConflicts: a replaced type that declarations left to
// client-go still name fails the generation unless conflictPolicies
// decides it, for exactly those declarations.
func TestReplacedConflicts(t *testing.T) {
	key := "k8s.io/client-go/tools/cache.Reflector"
	saved := conflictPolicies[key]
	t.Cleanup(func() { conflictPolicies[key] = saved })

	delete(conflictPolicies, key)
	_, err := generateFixture(t, "fields-good", "k8s.io/client-go/tools/cache")
	want := "Reflector: replaced, but client-go's DefaultWatchErrorHandler, WatchErrorHandler, WatchErrorHandlerWithContext still name client-go's Reflector"
	if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "has no entry: decide") {
		t.Fatalf("without a decision: err = %v, want it to contain %q", err, want)
	}

	// A decision for fewer names (a client-go release that names the type
	// in one more declaration) fails too.
	conflictPolicies[key] = conflictPolicy{names: []string{"WatchErrorHandler"}, why: "test"}
	_, err = generateFixture(t, "fields-good", "k8s.io/client-go/tools/cache")
	if err == nil || !strings.Contains(err.Error(), "has an entry for WatchErrorHandler: decide") {
		t.Fatalf("with a stale decision: err = %v", err)
	}
}
