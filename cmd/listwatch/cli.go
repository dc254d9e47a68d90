package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"
)

const usageText = `listwatch: informer-backed tools for Kubernetes, built on listwatch.

Usage:
  listwatch demo  [flags]            run the example controller against a simulated (or real) cluster
  listwatch watch RESOURCE [flags]   watch a resource like 'kubectl get -w'

Run 'listwatch <command> --help' for a command's flags.
`

// usageError is a mistake on the command line: it is reported with a hint
// to the command's help, as kubectl does.
type usageError struct {
	cmd string
	err error
}

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

// run executes the command line args and returns the process exit status:
// 0 on success, 1 on any error (kubectl's convention).
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usageText)
		return 1
	}
	out, errOut := newSyncWriter(stdout), newSyncWriter(stderr)
	var err error
	switch cmd := args[0]; cmd {
	case "-h", "--help", "help":
		fmt.Fprint(stdout, usageText)
		return 0
	case "watch":
		err = runWatchCommand(ctx, args[1:], out, errOut)
	case "demo":
		err = runDemoCommand(ctx, args[1:], out, errOut)
	default:
		err = &usageError{err: fmt.Errorf("unknown command %q for \"listwatch\"", cmd)}
	}
	return report(err, errOut)
}

// report prints err kubectl-style and returns the exit status.
func report(err error, stderr io.Writer) int {
	if err == nil || errors.Is(err, pflag.ErrHelp) {
		return 0
	}
	msg := strings.TrimSpace(err.Error())
	if !strings.HasPrefix(msg, "error: ") {
		msg = "error: " + msg
	}
	fmt.Fprintln(stderr, msg)
	var ue *usageError
	if errors.As(err, &ue) {
		if ue.cmd == "" {
			fmt.Fprintln(stderr, "Run 'listwatch --help' for usage.")
		} else {
			fmt.Fprintf(stderr, "See 'listwatch %s --help' for usage.\n", ue.cmd)
		}
	}
	return 1
}

// parseFlags parses args into fs, turning pflag's errors into usage errors.
// The flag set prints its own help on -h and nothing on errors.
func parseFlags(fs *pflag.FlagSet, cmd string, args []string, stdout io.Writer) error {
	fs.SetOutput(stdout)
	fs.SortFlags = false
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return err
		}
		return &usageError{cmd: cmd, err: err}
	}
	return nil
}

// newFlagSet returns a flag set for cmd whose usage shows synopsis.
func newFlagSet(cmd, synopsis string) *pflag.FlagSet {
	fs := pflag.NewFlagSet(cmd, pflag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "%s\nFlags:\n%s", synopsis, fs.FlagUsages())
	}
	return fs
}
