package reflector

import (
	"flag"
	"os"
	"strconv"
	"testing"
	"testing/synctest"

	"k8s.io/klog/v2"
)

// TestConvergeSeed replays one seed of the convergence harness with logs, to
// debug a failure:
//
//	SEED=129 V=5 go test ./reflector -run TestConvergeSeed -v      # listwatch
//	SEED=129 V=4 CLIENTGO=1 go test ./reflector -run TestConvergeSeed -v
func TestConvergeSeed(t *testing.T) {
	s := os.Getenv("SEED")
	if s == "" {
		t.Skip("set SEED to replay one seed of TestConvergeUnderFaults")
	}
	seed, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	_ = fs.Set("v", os.Getenv("V"))
	subj := listwatchSubject
	if os.Getenv("CLIENTGO") != "" {
		subj = clientGoSubject
	}
	var ok bool
	var detail string
	synctest.Test(t, func(t *testing.T) { ok, detail, _ = converge(t, seed, subj) })
	if !ok {
		t.Errorf("seed %d did not converge:\n%s", seed, detail)
	}
}
