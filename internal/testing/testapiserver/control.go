package testapiserver

import (
	"context"
	"errors"
)

// errStopped is returned by methods called after Stop.
var errStopped = errors.New("testapiserver: server is stopped")

// Stop kills kube-apiserver and etcd (SIGKILL to each process group) and
// waits for them. It is idempotent; Start registers it with tb.Cleanup.
func (s *Server) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stopped = true
	s.apiserver.kill()
	s.etcd.kill()
}

// Kill sends SIGKILL to kube-apiserver and leaves it down; etcd keeps
// running. Clients see connection errors until Restart.
func (s *Server) Kill() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return errStopped
	}
	s.apiserver.kill()
	return nil
}

// Restart kills kube-apiserver with SIGKILL (if it is running) and starts
// it again with the same flags, port, certificates and etcd, returning once
// /readyz passes. Existing rest.Configs stay valid.
func (s *Server) Restart(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return errStopped
	}
	s.apiserver.kill()
	return s.startAPIServer(ctx)
}

// RestartEtcd kills etcd with SIGKILL and starts it again on the same ports
// and data directory, returning once it is healthy. The apiserver keeps
// running and reconnects by itself.
func (s *Server) RestartEtcd(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return errStopped
	}
	s.etcd.kill()
	return s.startEtcd(ctx)
}

// Timings returns how long the last starts of etcd and kube-apiserver took.
func (s *Server) Timings() Timings {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.timings
}
