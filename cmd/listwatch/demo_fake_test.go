package main

import (
	"regexp"
	"strings"
	"testing"
	"testing/synctest"
)

// The default demo mode (simulated cluster) injects each fault once,
// recovers, converges and reports that the cache equals the server. Under
// synctest its 20 virtual seconds take a fraction of a real one.
func TestDemoAgainstSimulatedCluster(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := runArgs(t.Context(), "demo", "--duration", "20s", "--objects", "300", "--rate", "50", "--seed", "3")
		if r.code != 0 {
			t.Fatalf("exit %d; stdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
		}
		for _, want := range []string{
			"seeded 300 ConfigMaps",
			"synced: 300 objects cached",
			"fault: server down",
			"fault: server up again",
			"fault: throttling",
			"fault: watch stalled",
			"fault: the next 2 watches fail",
			"controller converged",
			"relists by cause: Expired=1",
			"cache equals server: OK",
		} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("stdout lacks %q", want)
			}
		}
		if !regexp.MustCompile(`controller +\d+ reconciles, [1-9]\d* retried; converged: true`).MatchString(r.stdout) {
			t.Errorf("no retried reconcile, or not converged")
		}
		status := regexp.MustCompile(`(?m)^\[ +\d+s\] cache \d+ \| +\d+ ev/s \| ctrl \d+ rec \d+ retry \| audit \d+/\S+ slow \d+/\S+ \| \S+ \| errs \S+$`)
		// One a second of the 20s run: the ticks at 1s to 19s, and the
		// one at 20s unless the end of the run, due at the same virtual
		// instant, comes first (it did once in a loaded -race run).
		if n := len(status.FindAllString(r.stdout, -1)); n < 19 {
			t.Errorf("%d status lines, want one a second", n)
		}
		if t.Failed() {
			t.Logf("stdout:\n%s", r.stdout)
		}
	})
}

// The same seed gives the same churn: two runs write the same number of
// objects and end with the same number cached.
func TestDemoIsReproducible(t *testing.T) {
	summary := regexp.MustCompile(`churn +\d+ writes|cache equals server: OK \(\d+ objects`)
	var got [2][]string
	for i := range got {
		synctest.Test(t, func(t *testing.T) {
			r := runArgs(t.Context(), "demo", "--duration", "5s", "--objects", "100", "--rate", "20", "--faults=false")
			if r.code != 0 {
				t.Fatalf("exit %d; stdout:\n%s", r.code, r.stdout)
			}
			got[i] = summary.FindAllString(r.stdout, -1)
		})
	}
	if len(got[0]) != 2 || strings.Join(got[0], "|") != strings.Join(got[1], "|") {
		t.Fatalf("runs differ: %q vs %q", got[0], got[1])
	}
}
