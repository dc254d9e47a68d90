package samplecontroller

import (
	"bytes"
	"flag"
	"os"
	"testing"
)

var update = flag.Bool("update", false, "write listwatch/controller.go from clientgo/controller.go")

// rewritten are the packages whose import paths change: client-go's
// covered by listwatch's clientgo/ tree that the controller imports.
var rewritten = []string{"informers", "tools/cache", "util/workqueue"}

// The listwatch copy of the controller is the client-go one with the
// import prefix of the covered packages changed, and nothing else.
func TestOnlyImportsDiffer(t *testing.T) {
	src, err := os.ReadFile("clientgo/controller.go")
	if err != nil {
		t.Fatal(err)
	}
	want := src
	for _, p := range rewritten {
		from := []byte(`"k8s.io/client-go/` + p + `"`)
		if !bytes.Contains(want, from) {
			t.Fatalf("clientgo/controller.go does not import %s", from)
		}
		want = bytes.ReplaceAll(want, from, []byte(`"github.com/listwatch/listwatch/clientgo/`+p+`"`))
	}
	if *update {
		if err := os.WriteFile("listwatch/controller.go", want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile("listwatch/controller.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("listwatch/controller.go is not clientgo/controller.go with the imports rewritten; run with -update")
	}
}
