package kcm

import (
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
	if testing.Short() {
		t.Skip("real kube-apiserver and kube-controller-manager: skipped under -short")
	}
	bins, err := Binaries(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	results := map[Build]Result{}
	for _, b := range []Build{Stock, Listwatch} {
		t.Run(string(b), func(t *testing.T) {
			res, err := Run(t.Context(), t, b, Options{Bins: bins, Size: Small, Logf: t.Logf})
			if err != nil {
				t.Fatal(err)
			}
			results[b] = res
		})
	}
	stock, lw := results[Stock], results[Listwatch]
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
