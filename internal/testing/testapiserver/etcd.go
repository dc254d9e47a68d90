package testapiserver

import (
	"path/filepath"
	"strconv"
)

// etcdProcess describes a single-member etcd on loopback with its data in
// dataDir. fsync is off: the data is thrown away after the test anyway.
// The backend quota is etcd's largest recommended (8 GiB), not its 2 GiB
// default: benchmarks grow servers to 150,000 realistic pods.
func etcdProcess(binDir, workDir string, clientPort, peerPort int) *process {
	client := "http://127.0.0.1:" + strconv.Itoa(clientPort)
	peer := "http://127.0.0.1:" + strconv.Itoa(peerPort)
	return &process{
		name: "etcd",
		bin:  filepath.Join(binDir, "etcd"),
		args: []string{
			"--name=listwatch",
			"--data-dir=" + filepath.Join(workDir, "etcd-data"),
			"--listen-client-urls=" + client,
			"--advertise-client-urls=" + client,
			"--listen-peer-urls=" + peer,
			"--initial-advertise-peer-urls=" + peer,
			"--initial-cluster=listwatch=" + peer,
			"--unsafe-no-fsync=true",
			"--quota-backend-bytes=8589934592",
			"--log-level=warn",
		},
		logPath: filepath.Join(workDir, "etcd.log"),
	}
}
