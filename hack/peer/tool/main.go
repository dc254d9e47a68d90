// Command tool is the helper of hack/peer/run.sh: it ports the peers' test
// files onto listwatch's drop-ins (port), places client-go's test files into
// listwatch's clientgo/ packages with only their imports rewritten
// (rewrite), summarises the results against hack/peer/known-failures.txt
// (summary), and lists the known failures that hang as a go test -skip
// pattern (hangs). Standard library only.
package main

import (
	"fmt"
	"os"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: tool port|rewrite|summary|hangs ...")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "port":
		err = port(os.Args[2:])
	case "rewrite":
		err = rewrite(os.Args[2:])
	case "summary":
		err = summary(os.Args[2:])
	case "hangs":
		err = hangs(os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "hack/peer/tool:", err)
		os.Exit(2)
	}
}
