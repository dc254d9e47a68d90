package main

import (
	"strings"
	"testing"

	"k8s.io/client-go/rest"
)

// Bad command lines exit 1 with kubectl-style messages on stderr and no
// output on stdout; help exits 0. Nothing here contacts a server.
func TestCommandLineErrors(t *testing.T) {
	for _, tc := range []struct {
		args       []string
		code       int
		stderr     []string // substrings, in order
		stdoutHave string
	}{
		{args: nil, code: 1, stderr: []string{"Usage:"}},
		{args: []string{"--help"}, code: 0, stdoutHave: "listwatch watch RESOURCE"},
		{args: []string{"bogus"}, code: 1, stderr: []string{`error: unknown command "bogus" for "listwatch"`, "Run 'listwatch --help' for usage."}},
		{args: []string{"watch"}, code: 1, stderr: []string{"error: you must specify the type of resource to watch", "See 'listwatch watch --help' for usage."}},
		{args: []string{"watch", "pods", "cm"}, code: 1, stderr: []string{"error: watch takes one resource"}},
		{args: []string{"watch", "pods", "--bogus"}, code: 1, stderr: []string{"error: unknown flag: --bogus", "See 'listwatch watch --help'"}},
		{args: []string{"watch", "pods", "-n", "a", "-A"}, code: 1, stderr: []string{"error: --namespace and --all-namespaces are mutually exclusive"}},
		{args: []string{"watch", "pods", "--stats-interval", "-1s"}, code: 1, stderr: []string{"must not be negative"}},
		{args: []string{"watch", "pods", "--duration", "soon"}, code: 1, stderr: []string{`error: invalid argument "soon" for "--duration" flag`}},
		{args: []string{"watch", "--help"}, code: 0, stdoutHave: "--all-namespaces"},
		{args: []string{"watch", "pods", "--kubeconfig", "/nonexistent/kubeconfig"}, code: 1, stderr: []string{"error: invalid kubeconfig", "/nonexistent/kubeconfig"}},
		{args: []string{"demo", "extra"}, code: 1, stderr: []string{"error: demo takes no arguments", "See 'listwatch demo --help'"}},
		{args: []string{"demo", "--duration", "0s"}, code: 1, stderr: []string{"error: --duration, --status-interval and --settle-timeout must be positive"}},
		{args: []string{"demo", "--workers", "0"}, code: 1, stderr: []string{"--workers at least 1"}},
		{args: []string{"demo", "--rate", "1e12"}, code: 1, stderr: []string{"error: --rate must be between 0 and 100000"}},
		{args: []string{"demo", "--rate", "-1"}, code: 1, stderr: []string{"error: --rate must be between 0 and 100000"}},
		{args: []string{"demo", "-n", "mine"}, code: 1, stderr: []string{"error: --namespace applies to real clusters only"}},
		{args: []string{"demo", "--help"}, code: 0, stdoutHave: "--duration"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			r := runArgs(t.Context(), tc.args...)
			if r.code != tc.code {
				t.Fatalf("exit %d, want %d; stderr:\n%s", r.code, tc.code, r.stderr)
			}
			rest := r.stderr
			for _, want := range tc.stderr {
				i := strings.Index(rest, want)
				if i < 0 {
					t.Fatalf("stderr lacks %q (in order); stderr:\n%s", want, r.stderr)
				}
				rest = rest[i+len(want):]
			}
			if tc.stdoutHave != "" && !strings.Contains(r.stdout, tc.stdoutHave) {
				t.Fatalf("stdout lacks %q:\n%s", tc.stdoutHave, r.stdout)
			}
			if tc.code != 0 && r.stdout != "" {
				t.Fatalf("a failed command printed to stdout:\n%s", r.stdout)
			}
		})
	}
}

// A server nobody listens on (a closed loopback port) is reported as a
// connection failure naming the server, with exit status 1, by both
// commands, before any informer starts.
func TestUnreachableServer(t *testing.T) {
	kc := writeKubeconfig(t, &rest.Config{Host: "https://127.0.0.1:1", BearerToken: "x"}, "default")
	for _, args := range [][]string{
		{"watch", "pods", "--kubeconfig", kc},
		{"demo", "--kubeconfig", kc},
	} {
		r := runArgs(t.Context(), args...)
		if r.code != 1 {
			t.Fatalf("%v: exit %d, want 1; stderr:\n%s", args, r.code, r.stderr)
		}
		if !strings.Contains(r.stderr, "error: the connection to the server https://127.0.0.1:1 failed") ||
			!strings.Contains(r.stderr, "connection refused") {
			t.Fatalf("%v: unclear message:\n%s", args, r.stderr)
		}
	}
}
