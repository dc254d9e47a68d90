package testapiserver

import (
	"k8s.io/client-go/rest"
)

// URL returns the apiserver's base URL, https://127.0.0.1:<port>. It does
// not change across restarts.
func (s *Server) URL() string { return s.baseURL }

// EtcdURL returns etcd's client URL, http://127.0.0.1:<port>.
func (s *Server) EtcdURL() string { return s.etcdURL }

// WorkDir returns the directory with the etcd data, certificates,
// credentials and the etcd.log and kube-apiserver.log files. It is removed
// when the test ends.
func (s *Server) WorkDir() string { return s.workDir }

// AdminConfig returns a fresh rest.Config for AdminUser (system:masters),
// verifying the apiserver's self-signed certificate against its own CA.
// The caller may modify it.
func (s *Server) AdminConfig() *rest.Config { return s.config(s.creds.adminToken) }

// UnprivilegedConfig returns a fresh rest.Config for UnprivilegedUser, who
// is authenticated but bound to no RBAC role.
func (s *Server) UnprivilegedConfig() *rest.Config { return s.config(s.creds.userToken) }

// config builds a rest.Config with the given bearer token.
func (s *Server) config(token string) *rest.Config {
	return &rest.Config{
		Host:            s.baseURL,
		BearerToken:     token,
		TLSClientConfig: rest.TLSClientConfig{CAData: append([]byte(nil), s.caData...)},
		QPS:             -1, // no client-side throttling against a private server
		UserAgent:       "listwatch-testapiserver",
	}
}

// ServiceAccountKeyFile returns the PEM file of the private key the
// apiserver verifies service-account tokens with (--service-account-key-file
// takes its public half): a kube-controller-manager signing tokens for this
// server is given it as --service-account-private-key-file.
func (s *Server) ServiceAccountKeyFile() string { return s.creds.saKeyFile }

// CAFile returns a PEM file holding the apiserver's serving certificate
// and the CA that signed it (a kube-controller-manager's --root-ca-file).
func (s *Server) CAFile() string { return servingCertFile(s.workDir) }
