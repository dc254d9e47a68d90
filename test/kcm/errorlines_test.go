package kcm

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// errorLines keeps error lines only, replaces what differs from run to run,
// and gives every error of a timing class one line, whichever controller
// and object it names (klog quotes the error, so names come escaped).
func TestErrorLines(t *testing.T) {
	log := `I1129 09:11:11.170632   26217 flags.go:64] FLAG: --v="2"
E1129 09:11:17.900784   26217 stateful_set.go:509] "Error syncing StatefulSet, requeuing" err="read version: 1315 is not as new as written version: 1646 for group resource pods" logger="UnhandledError" key="team-01/db-0"
E1129 09:11:17.802715   26217 replica_set.go:640] "Unhandled Error" err="sync \"team-01/app-02-5d495446c7\" failed with read version: 776 is not as new as written version: 914 for group resource pods" logger="UnhandledError"
E1129 09:11:18.000001   26217 job_controller.go:700] "Unhandled Error" err="syncing job: Operation cannot be fulfilled on resourcequotas \"compute\": the object has been modified; please apply your changes to the latest version and try again" logger="UnhandledError"
E1129 09:11:19.000001   26217 stateful_set.go:509] "Error syncing StatefulSet, requeuing" err="controllerrevisions.apps \"db-0-7b9c8d6f5\" is forbidden: unable to create new content in namespace team-02 because it is being terminated" logger="UnhandledError" key="team-02/db-0"
E1129 09:11:22.825458   26217 publisher.go:378] "Unhandled Error" err="syncing \"\" failed: ClusterTrustBundle.certificates.k8s.io \"kubernetes.io:kube-apiserver-serving:ed9d366f86a6e63609b9c81c\" is invalid" logger="UnhandledError"
`
	path := filepath.Join(t.TempDir(), "kcm.log")
	if err := os.WriteFile(path, []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	lines, behinds, err := errorLines(path)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`E (any controller)] Operation cannot be fulfilled: the object has been modified (a lost race, retried)`,
		Behind,
		`E (any controller)] unable to create new content in a namespace being terminated`,
		`E publisher.go:#] "Unhandled Error" err="syncing \"\" failed: ClusterTrustBundle.certificates.k#s.io \"kubernetes.io:kube-apiserver-serving:#\" is invalid" logger="UnhandledError"`,
	}
	if !slices.Equal(lines, want) || behinds != 2 {
		t.Errorf("errorLines:\n%q\n%d behind, want\n%q\n2 behind", lines, behinds, want)
	}
}
