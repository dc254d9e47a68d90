package testapiserver

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// TB is the part of testing.TB that Start needs. *testing.T, *testing.B
// and Ginkgo's GinkgoT() all satisfy it.
type TB interface {
	Helper()
	Logf(format string, args ...any)
	Cleanup(func())
	TempDir() string
	Failed() bool
	Skip(args ...any)
}

// Timings records how long the last start of each child took, from
// launching the process to its readiness probe passing.
type Timings struct {
	// EtcdReady is the time from starting etcd to /health reporting true.
	EtcdReady time.Duration
	// APIServerReady is the time from starting kube-apiserver to /readyz
	// answering 200 (for the last Start or Restart).
	APIServerReady time.Duration
}

// Server is a running etcd plus kube-apiserver on loopback. Its methods are
// safe for concurrent use.
type Server struct {
	// workDir holds the etcd data, certificates, credentials and logs; it
	// is a TB temporary directory and outlives every restart.
	workDir string
	// baseURL is https://127.0.0.1:<securePort>; fixed for the Server's life.
	baseURL string
	// etcdURL is http://127.0.0.1:<clientPort>; fixed for the Server's life.
	etcdURL string
	// creds are the tokens and keys the apiserver was started with.
	creds *credentials
	// caData is the PEM the apiserver serves its certificate chain from;
	// restarts reuse the files in workDir/certs, so it never changes.
	caData []byte
	// timeout bounds each readiness wait.
	timeout time.Duration

	// mu guards the processes and timings; a Restart holds it until the
	// apiserver is ready, so callers never see a half-started Server.
	mu        sync.Mutex
	etcd      *process
	apiserver *process
	timings   Timings
	// stopped is set by Stop; afterwards every method fails.
	stopped bool
}

// startAttempts is how often Start tries with fresh ports when a child
// dies during start-up because another process took one of its ports.
const startAttempts = 3

// Start launches etcd and kube-apiserver on free loopback ports and waits
// until the apiserver's /readyz passes. Everything is torn down by a
// tb.Cleanup (and by Stop, which may be called earlier). Under go test
// -short it calls tb.Skip, as every test using a real apiserver must.
func Start(ctx context.Context, tb TB, opts Options) (*Server, error) {
	tb.Helper()
	if testing.Testing() && testing.Short() {
		tb.Skip("testapiserver: real kube-apiserver tests are skipped under -short")
		return nil, errors.New("testapiserver: skipped under -short")
	}
	if err := opts.validate(); err != nil {
		return nil, err
	}
	binDir, err := findBinaries(ctx, opts.BinDir)
	if err != nil {
		return nil, err
	}
	var lastErr error
	for attempt := 1; attempt <= startAttempts; attempt++ {
		s, err := launch(ctx, tb.TempDir(), binDir, opts)
		if err == nil {
			tb.Cleanup(func() { s.cleanup(tb) })
			tb.Logf("testapiserver: %s ready (etcd %v, kube-apiserver %v)", s.baseURL, s.timings.EtcdReady.Round(time.Millisecond), s.timings.APIServerReady.Round(time.Millisecond))
			return s, nil
		}
		lastErr = err
		if !lostPortRace(err) || ctx.Err() != nil || attempt == startAttempts {
			break
		}
		tb.Logf("testapiserver: start attempt %d lost a port race, retrying: %v", attempt, err)
	}
	return nil, lastErr
}

// lostPortRace reports whether a start failed only because a child could
// not bind a port that was free when freePorts picked it. Any other
// failure (a bad flag, a timeout) would just repeat itself.
func lostPortRace(err error) bool {
	return errors.Is(err, errExitedEarly) && strings.Contains(err.Error(), "address already in use")
}

// launch makes one attempt at starting both children in workDir. On error
// nothing is left running.
func launch(ctx context.Context, workDir, binDir string, opts Options) (*Server, error) {
	ports, err := freePorts(3)
	if err != nil {
		return nil, err
	}
	creds, err := newCredentials(workDir)
	if err != nil {
		return nil, err
	}
	s := &Server{
		workDir: workDir,
		baseURL: "https://127.0.0.1:" + strconv.Itoa(ports[2]),
		etcdURL: "http://127.0.0.1:" + strconv.Itoa(ports[0]),
		creds:   creds,
		timeout: opts.startTimeout(),
		etcd:    etcdProcess(binDir, workDir, ports[0], ports[1]),
	}
	s.apiserver = apiserverProcess(binDir, workDir, s.etcdURL, ports[2], creds, opts)
	if err := s.startEtcd(ctx); err != nil {
		s.Stop()
		return nil, err
	}
	if err := s.startAPIServer(ctx); err != nil {
		s.Stop()
		return nil, err
	}
	if s.caData, err = os.ReadFile(servingCertFile(workDir)); err != nil {
		s.Stop()
		return nil, fmt.Errorf("testapiserver: reading serving certificate: %w", err)
	}
	return s, nil
}

// startEtcd starts etcd and waits for it; the caller holds mu or owns s.
func (s *Server) startEtcd(ctx context.Context) error {
	begin := time.Now()
	if err := s.etcd.start(); err != nil {
		return err
	}
	if err := waitReady(ctx, s.etcd, s.timeout, etcdProbe(s.etcdURL)); err != nil {
		s.etcd.kill()
		return err
	}
	s.timings.EtcdReady = time.Since(begin)
	return nil
}

// startAPIServer starts kube-apiserver and waits for /readyz; the caller
// holds mu or owns s.
func (s *Server) startAPIServer(ctx context.Context) error {
	begin := time.Now()
	if err := s.apiserver.start(); err != nil {
		return err
	}
	probe := apiserverProbe(s.workDir, s.baseURL, s.creds.adminToken)
	if err := waitReady(ctx, s.apiserver, s.timeout, probe); err != nil {
		s.apiserver.kill()
		return err
	}
	s.timings.APIServerReady = time.Since(begin)
	return nil
}

// cleanup stops the server at the end of the test and, if the test failed,
// logs the tail of the apiserver log to help explain why.
func (s *Server) cleanup(tb TB) {
	if tb.Failed() {
		tb.Logf("testapiserver: kube-apiserver log tail:\n%s", s.apiserver.logTail(30))
	}
	s.Stop()
}
