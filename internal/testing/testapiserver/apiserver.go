package testapiserver

import (
	"path/filepath"
	"strconv"
)

// apiserverProcess describes a kube-apiserver that serves HTTPS on
// 127.0.0.1:securePort with a self-signed certificate in workDir/certs and
// stores its data in the etcd at etcdURL.
func apiserverProcess(binDir, workDir, etcdURL string, securePort int, creds *credentials, opts Options) *process {
	args := []string{
		"--etcd-servers=" + etcdURL,
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(securePort),
		"--cert-dir=" + filepath.Join(workDir, "certs"),
		"--token-auth-file=" + creds.tokenFile,
		"--service-account-key-file=" + creds.saPubFile,
		"--service-account-signing-key-file=" + creds.saKeyFile,
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-cluster-ip-range=10.0.0.0/24",
		"--authorization-mode=RBAC",
		"--profiling=false",
	}
	return &process{
		name:    "kube-apiserver",
		bin:     filepath.Join(binDir, "kube-apiserver"),
		args:    append(args, opts.APIServerArgs()...),
		logPath: filepath.Join(workDir, "kube-apiserver.log"),
	}
}

// servingCertFile is where the apiserver writes its self-signed serving
// certificate followed by the CA that signed it.
func servingCertFile(workDir string) string {
	return filepath.Join(workDir, "certs", "apiserver.crt")
}
