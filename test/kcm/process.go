package kcm

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Build names one of the two kube-controller-manager binaries.
type Build string

const (
	// Stock is kube-controller-manager as Kubernetes releases it.
	Stock Build = "stock"
	// Listwatch is the same with cmd/kube-controller-manager/app importing
	// listwatch's informers and metadatainformer packages.
	Listwatch Build = "listwatch"
)

// binary returns the file name of b's binary in the harness's directory.
func (b Build) binary() string {
	if b == Listwatch {
		return "kube-controller-manager-listwatch"
	}
	return "kube-controller-manager"
}

// controllerManager is a running kube-controller-manager process.
type controllerManager struct {
	cmd     *exec.Cmd
	logPath string
	port    int
	token   string
	http    *http.Client
	exited  chan struct{}
	waitErr error
}

// startControllerManager runs b's binary from bins against the server
// cfg reaches, with the service-account key and root CA given, its log in
// dir. qps is its client's QPS (burst twice that).
func startControllerManager(bins string, b Build, cfg *rest.Config, saKey, rootCA, dir string, qps int) (*controllerManager, error) {
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := writeKubeconfig(cfg, kubeconfig); err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	args := []string{
		"--kubeconfig=" + kubeconfig,
		// Its secure port checks callers with the server, as in a cluster,
		// so that the harness reads /metrics and /debug/pprof as the admin.
		"--authentication-kubeconfig=" + kubeconfig,
		"--authorization-kubeconfig=" + kubeconfig,
		"--bind-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(port),
		"--cert-dir=" + filepath.Join(dir, "certs"),
		"--leader-elect=false",
		"--controllers=*",
		"--use-service-account-credentials=true",
		"--service-account-private-key-file=" + saKey,
		"--root-ca-file=" + rootCA,
		"--kube-api-qps=" + strconv.Itoa(qps),
		"--kube-api-burst=" + strconv.Itoa(2*qps),
		// The quota controller recounts every 15 s rather than every
		// 5 minutes, so that a phase's usage settles within the phase.
		"--resource-quota-sync-period=15s",
		"--v=2",
	}
	logPath := filepath.Join(dir, string(b)+".log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(filepath.Join(bins, b.binary()), args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("starting %s: %w", b.binary(), err)
	}
	cm := &controllerManager{cmd: cmd, logPath: logPath, port: port, token: cfg.BearerToken, exited: make(chan struct{}),
		http: &http.Client{Timeout: 2 * time.Minute, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}} //nolint:gosec // its own self-signed certificate, on loopback
	go func() {
		cm.waitErr = cmd.Wait()
		logFile.Close()
		close(cm.exited)
	}()
	return cm, nil
}

// waitHealthy waits until the process answers /healthz.
func (c *controllerManager) waitHealthy(ctx context.Context, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		select {
		case <-c.exited:
			return fmt.Errorf("kube-controller-manager exited: %v; log tail:\n%s", c.waitErr, c.logTail(30))
		default:
		}
		if body, err := c.get(ctx, "/healthz"); err == nil && strings.TrimSpace(body) == "ok" {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("kube-controller-manager not healthy after %v; log tail:\n%s", timeout, c.logTail(30))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func (c *controllerManager) get(ctx context.Context, path string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("https://127.0.0.1:%d%s", c.port, path), nil)
	if err != nil {
		return "", err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	resp, err := c.http.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GET %s: %s: %s", path, resp.Status, body)
	}
	return string(body), err
}

// Usage is what the process uses at one moment.
type Usage struct {
	// HeapBytes is the live heap: HeapAlloc just after a collection the
	// harness asks for (/debug/pprof/heap?gc=1).
	HeapBytes int64
	// RSSBytes is the resident set size (VmRSS).
	RSSBytes int64
	// CPU is the user and system time the process has used so far.
	CPU time.Duration
}

// usage reads c's live heap, RSS and CPU.
func (c *controllerManager) usage(ctx context.Context) (Usage, error) {
	var u Usage
	body, err := c.get(ctx, "/debug/pprof/heap?debug=1&gc=1")
	if err != nil {
		return u, err
	}
	m := regexp.MustCompile(`(?m)^# HeapAlloc = (\d+)`).FindStringSubmatch(body)
	if m == nil {
		return u, errors.New("the heap profile has no HeapAlloc")
	}
	u.HeapBytes, _ = strconv.ParseInt(m[1], 10, 64)
	if u.RSSBytes, err = rss(c.cmd.Process.Pid); err != nil {
		return u, err
	}
	u.CPU, err = cpuTime(c.cmd.Process.Pid)
	return u, err
}

// saveHeap writes c's heap profile, after a collection, to dir/name; an
// empty dir saves nothing.
func (c *controllerManager) saveHeap(ctx context.Context, dir, name string) error {
	if dir == "" {
		return nil
	}
	body, err := c.get(ctx, "/debug/pprof/heap?gc=1")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644)
}

// rss reads a process's VmRSS.
func rss(pid int) (int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10, err
		}
	}
	return 0, errors.New("no VmRSS")
}

// cpuTime reads a process's user+system time from /proc/PID/stat.
func cpuTime(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name (field 2) may hold spaces; the fields after its
	// closing parenthesis start at field 3.
	s := string(b)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(fields) < 13 {
		return 0, errors.New("short /proc stat")
	}
	utime, err1 := strconv.ParseInt(fields[11], 10, 64)
	stime, err2 := strconv.ParseInt(fields[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, err
	}
	const ticksPerSecond = 100 // USER_HZ on Linux
	return time.Duration(utime+stime) * time.Second / ticksPerSecond, nil
}

// stop ends the process (SIGTERM, then SIGKILL after 20 s) and waits.
func (c *controllerManager) stop() {
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-c.exited:
	case <-time.After(20 * time.Second):
		_ = syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL)
		<-c.exited
	}
}

func (c *controllerManager) logTail(n int) string {
	b, _ := os.ReadFile(c.logPath)
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

var (
	// klogHeader is the start of a klog line: severity, date, time, pid,
	// file:line].
	klogHeader = regexp.MustCompile(`^([IWEF])\d{4} [\d:.]+\s+\d+ ([^\]]+)\] `)
	// generated matches what differs from run to run in a message: the
	// random suffixes of generated names, UIDs, hashes, resource
	// versions, IPs, times and other numbers.
	generated = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[0-9a-f]{16,}|-[b-df-hj-np-tv-z2-9]{5}\b|-[0-9a-f]{8,10}\b|\d+(\.\d+)*`)
)

// timing are the errors whose appearance depends on the timing of a run
// rather than on what the controllers do, each with the one line
// errorLines gives every error it matches, whichever controller, object
// or resource it names: a controller requeues an object because its
// informer has not yet seen the controller's own last write (v1.37's
// read-your-writes check), a write loses a race for an object
// (optimistic concurrency; the writer retries), or a controller writes
// into a namespace that is being deleted (refused; the namespace
// controller deletes what is there).
var timing = []timingClass{
	{regexp.MustCompile(`read version: \d+ is not as new as written version: \d+`), Behind},
	{regexp.MustCompile(`Operation cannot be fulfilled on \S+ \S+ the object has been modified`),
		"E (any controller)] Operation cannot be fulfilled: the object has been modified (a lost race, retried)"},
	{regexp.MustCompile(`unable to create new content in namespace \S+ because it is being terminated`),
		"E (any controller)] unable to create new content in a namespace being terminated"},
}

type timingClass struct {
	re   *regexp.Regexp
	line string
}

// Behind is the line errorLines gives every requeue because a cache was
// behind the controller's own write.
const Behind = "E (any controller)] read version is not as new as written version: a cache behind the controller's own write, requeued"

// errorLines returns the distinct error lines (severity E or F) of the
// log at path, with what differs from run to run replaced by "#", and how
// many of them were Behind.
func errorLines(path string) (lines []string, behinds int, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	seen := map[string]bool{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		m := klogHeader.FindStringSubmatch(sc.Text())
		if m == nil || (m[1] != "E" && m[1] != "F") {
			continue
		}
		msg := sc.Text()[len(m[0]):]
		if i := slices.IndexFunc(timing, func(c timingClass) bool { return c.re.MatchString(msg) }); i >= 0 {
			seen[timing[i].line] = true
			if timing[i].line == Behind {
				behinds++
			}
			continue
		}
		if len(msg) > 400 {
			msg = msg[:400]
		}
		seen[m[1]+" "+generated.ReplaceAllString(m[2]+"] "+msg, "#")] = true
	}
	out := make([]string, 0, len(seen))
	for l := range seen {
		out = append(out, l)
	}
	slices.Sort(out)
	return out, behinds, sc.Err()
}

func writeKubeconfig(cfg *rest.Config, path string) error {
	kc := clientcmdapi.NewConfig()
	kc.Clusters["c"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos["u"] = &clientcmdapi.AuthInfo{Token: cfg.BearerToken}
	kc.Contexts["c"] = &clientcmdapi.Context{Cluster: "c", AuthInfo: "u"}
	kc.CurrentContext = "c"
	return clientcmd.WriteToFile(*kc, path)
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
