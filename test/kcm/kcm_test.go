package kcm

import (
	"slices"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestControllerManager runs the stock kube-controller-manager and the one
// built on listwatch's factories, one after the other, each against a
// kube-apiserver of its own holding the same cluster (Small), through the
// same phases, and requires the same state after each phase, every
// workload converged, and no error in listwatch's log that the stock
// build's does not print.
func TestControllerManager(t *testing.T) {
	stock, lw := runBoth(t, Options{Size: Small}, nil)
	if len(stock.States) != len(Phases) || len(lw.States) != len(Phases) {
		t.Fatal("a run did not finish")
	}
	for _, phase := range Phases {
		if d := stock.States[phase].Diff(lw.States[phase]); d != nil {
			t.Errorf("after the phase %q the server's state differs (- stock, + listwatch):\n%s", phase, joinLines(d))
		}
	}
	if extra := missingFrom(lw.Errors, stock.Errors); len(extra) > 0 {
		t.Errorf("listwatch's log has errors the stock build's has not:\n%s", joinLines(extra))
	}
	t.Logf("stock: available %v, collected %v, namespace gone %v; listwatch: %v, %v, %v",
		stock.Available, stock.Collected, stock.NamespaceGone, lw.Available, lw.Collected, lw.NamespaceGone)
}

// TestForbiddenResource runs both builds through the initial sync as a user
// that may not list or watch the custom resource (403, as for a resource a
// cluster's RBAC keeps from the controller manager): the metadata-only
// informers of the garbage collector and the quota controller fail their
// lists, and each build must keep running, log the refusal, converge every
// workload and leave the server in the same state as the other, with no
// other error line than stock's.
func TestForbiddenResource(t *testing.T) {
	stock, lw := runBoth(t, Options{Size: Small, Forbidden: &Widgets, Until: "synced"}, func(t *testing.T, res Result) {
		refused := slices.IndexFunc(res.Errors, func(l string) bool { return strings.Contains(l, "widgets") && strings.Contains(l, "forbidden") })
		if refused < 0 {
			t.Errorf("no error line says that listing widgets is forbidden; errors:\n%s", joinLines(res.Errors))
		}
	})
	if len(stock.States) != 1 || len(lw.States) != 1 {
		t.Fatal("a run did not finish")
	}
	if d := stock.States["synced"].Diff(lw.States["synced"]); d != nil {
		t.Errorf("after the initial sync the server's state differs (- stock, + listwatch):\n%s", joinLines(d))
	}
	// The refusal's consequences: the monitors of the refused resource
	// never sync, so the garbage collector and the quota controller give
	// up waiting for them after 30 s, in either build, if it is still
	// running then. How long a run lasts depends on when in the minute it
	// starts (it waits for every CronJob's first Job, at the next minute),
	// not on the build.
	isRefusal := func(l string) bool {
		return strings.Contains(l, "widgets") || strings.Contains(l, "dependency graph builder sync") ||
			strings.Contains(l, "quota monitor sync") || strings.Contains(l, "Unable to sync caches")
	}
	if extra := slices.DeleteFunc(missingFrom(lw.Errors, stock.Errors), isRefusal); len(extra) > 0 {
		t.Errorf("listwatch's log has errors the stock build's has not:\n%s", joinLines(extra))
	}
}

// runBoth runs each build with opts (the binaries and t's log added) in a
// subtest, calls check, if not nil, on each result there, and returns
// stock's and listwatch's results. It skips under -short.
func runBoth(t *testing.T, opts Options, check func(*testing.T, Result)) (stock, lw Result) {
	t.Helper()
	if testing.Short() {
		t.Skip("real kube-apiserver and kube-controller-manager: skipped under -short")
	}
	bins, err := Binaries(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	opts.Bins, opts.Logf = bins, t.Logf
	results := map[Build]Result{}
	for _, b := range []Build{Stock, Listwatch} {
		t.Run(string(b), func(t *testing.T) {
			res, err := Run(t.Context(), t, b, opts)
			if err != nil {
				t.Fatal(err)
			}
			if check != nil {
				check(t, res)
			}
			results[b] = res
		})
	}
	return results[Stock], results[Listwatch]
}
