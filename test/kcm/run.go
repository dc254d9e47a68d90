package kcm

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	"github.com/listwatch/listwatch/internal/testing/testapiserver"
)

// Binaries returns the directory with the harness's binaries (built by
// hack/build-kcm.sh, which caches them), or LISTWATCH_KCM_BIN's.
func Binaries(ctx context.Context) (string, error) {
	if dir := os.Getenv("LISTWATCH_KCM_BIN"); dir != "" {
		return dir, nil
	}
	root, err := repoRoot()
	if err != nil {
		return "", err
	}
	cmd := exec.CommandContext(ctx, "bash", filepath.Join(root, "hack", "build-kcm.sh"))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("hack/build-kcm.sh: %w\n%s", err, stderr.String())
	}
	return strings.TrimSpace(string(out)), nil
}

func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "hack", "build-kcm.sh")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no hack/build-kcm.sh above %s", dir)
		}
		dir = parent
	}
}

// Result is one run of one build.
type Result struct {
	Build Build
	// States are the server's state after each phase, by phase.
	States map[string]State
	// Available is the time from starting the controller manager until
	// every Deployment was available (all its replicas).
	Available time.Duration
	// Collected is the time from deleting a third of the Deployments and
	// every Job until the garbage collector had deleted all their
	// dependents; NamespaceGone from deleting a namespace until it was
	// gone.
	Collected, NamespaceGone time.Duration
	// Synced and End are the process's usage after the initial sync and at
	// the end of the churn; SyncCPU the CPU it used until every workload
	// had converged, ChurnCPU the CPU of the churn.
	Synced, End       Usage
	SyncCPU, ChurnCPU time.Duration
	// Errors are the distinct error lines of its log (errorLines);
	// Behinds counts its errors of the class Behind.
	Errors  []string
	Behinds int
	// AgentFailures counts the agent's writes that failed.
	AgentFailures int64
	// Log is the controller manager's log file.
	Log string
}

// Phases are the names of Result.States, in order.
var Phases = []string{"synced", "scaled", "collected", "namespace deleted"}

// Options are one run's.
type Options struct {
	Bins string
	Size Size
	// QPS is the controller manager's --kube-api-qps (default 200).
	QPS int
	// Logf reports progress.
	Logf func(format string, args ...any)
	// Forbidden, when set, is a resource the controller manager may not
	// list or watch: it runs as testapiserver.UnprivilegedUser with every
	// other right (forbid), and its informers for the resource get 403.
	Forbidden *schema.GroupVersionResource
	// Profiles, when set, is a directory where Run saves the controller
	// manager's heap profile after the initial sync and at the end of the
	// churn (<build>-synced.heap, <build>-end.heap; go tool pprof reads them),
	// and its log (<build>.log).
	Profiles string
	// Until "synced" stops Run after the initial sync (with the process
	// still answering /healthz); "" takes the build through every phase.
	Until string
}

// Run starts kube-apiserver and etcd (the harness's release), writes the
// cluster, runs b's controller manager with the agent playing the
// scheduler and kubelets, and takes it through the phases: the initial
// sync until every workload has converged; Deployments scaled up and down;
// a third of them and every Job deleted, their dependents left to the
// garbage collector; the last namespace deleted. tb owns the servers and
// the temporary directory.
func Run(ctx context.Context, tb testapiserver.TB, b Build, opts Options) (res Result, err error) {
	res = Result{Build: b, States: map[string]State{}}
	if opts.QPS == 0 {
		opts.QPS = 200
	}
	logf := opts.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}
	// v1.37 refuses a loopback advertise address with the endpoint
	// reconciler (the kubernetes Service's endpoints) on; the full size
	// has more Services than testapiserver's /24 has addresses.
	srv, err := testapiserver.Start(ctx, tb, testapiserver.Options{BinDir: opts.Bins,
		ExtraAPIServerArgs: []string{"--endpoint-reconciler-type=none", "--service-cluster-ip-range=10.0.0.0/16"}})
	if err != nil {
		return res, err
	}
	cfg := srv.AdminConfig()
	cfg.UserAgent = "kcm-harness"
	// The TLS Secrets' certificates are placeholders: the server's warning
	// about each one is noise.
	cfg.WarningHandler = rest.NoWarnings{}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return res, err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return res, err
	}
	if _, err := srv.InstallCRD(ctx, Widgets.GroupVersion().WithKind("Widget")); err != nil {
		return res, err
	}
	start := time.Now()
	if err := write(ctx, cs, dyn, opts.Size); err != nil {
		return res, fmt.Errorf("writing the cluster: %w", err)
	}
	logf("%s: cluster written in %v", b, time.Since(start).Round(time.Millisecond))

	agentCtx, stopAgent := context.WithCancel(ctx)
	ag := &agent{cs: cs, nodes: opts.Size.Nodes, log: klog.Background()}
	var wg sync.WaitGroup
	wg.Go(func() { ag.run(agentCtx, 16) })
	defer func() { stopAgent(); wg.Wait(); res.AgentFailures = ag.failures.Load() }()

	cmCfg := cfg
	if opts.Forbidden != nil {
		if err := forbid(ctx, cs, *opts.Forbidden); err != nil {
			return res, fmt.Errorf("forbidding %s: %w", opts.Forbidden, err)
		}
		cmCfg = srv.UnprivilegedConfig()
	}
	dir := tb.TempDir()
	cm, err := startControllerManager(opts.Bins, b, cmCfg, srv.ServiceAccountKeyFile(), srv.CAFile(), dir, opts.QPS)
	if err != nil {
		return res, err
	}
	res.Log = cm.logPath
	defer func() {
		cm.stop()
		res.Errors, res.Behinds, _ = errorLines(cm.logPath)
		if opts.Profiles != "" {
			if data, err := os.ReadFile(cm.logPath); err == nil {
				_ = os.WriteFile(filepath.Join(opts.Profiles, filepath.Base(cm.logPath)), data, 0o644)
			}
		}
		logf("%s: %d distinct error lines, %d requeues because a cache was behind the controller's own write", b, len(res.Errors), res.Behinds)
	}()
	started := time.Now()
	if err := cm.waitHealthy(ctx, 2*time.Minute); err != nil {
		return res, err
	}
	namespaces := make([]string, opts.Size.Namespaces)
	for i := range namespaces {
		namespaces[i] = Namespace(i)
	}
	timeout := 5*time.Minute + time.Duration(opts.Size.Pods())*20*time.Millisecond
	// With a resource it may not list, the quota controller (stock's as
	// listwatch's) times out waiting for its monitors and computes no
	// usage: the quotas are not waited for.
	quota := opts.Forbidden == nil
	if err := waitFor(ctx, timeout, func() (bool, error) { return deploymentsAvailable(ctx, cs, namespaces) }); err != nil {
		return res, fmt.Errorf("initial sync: %w; log tail:\n%s", err, cm.logTail(20))
	}
	res.Available = time.Since(started)
	if err := converge(ctx, cs, namespaces, timeout, quota); err != nil {
		return res, fmt.Errorf("initial sync: %w; log tail:\n%s", err, cm.logTail(20))
	}
	if res.Synced, err = cm.usage(ctx); err != nil {
		return res, err
	}
	res.SyncCPU = res.Synced.CPU
	if err := cm.saveHeap(ctx, opts.Profiles, string(b)+"-synced.heap"); err != nil {
		return res, err
	}
	logf("%s: every Deployment available %v after the start, every workload converged %v after the start; heap %d MiB, RSS %d MiB, CPU %v", b, res.Available.Round(time.Millisecond), time.Since(started).Round(time.Millisecond),
		res.Synced.HeapBytes>>20, res.Synced.RSSBytes>>20, res.SyncCPU)
	if res.States["synced"], err = snapshot(ctx, cs, dyn, namespaces); err != nil {
		return res, err
	}
	if opts.Until == "synced" {
		return res, cm.waitHealthy(ctx, time.Minute)
	}

	// Scale every Deployment: the even ones up by half, the odd ones down
	// by half.
	for _, ns := range namespaces {
		for i := range opts.Size.Deployments {
			replicas := opts.Size.Replicas * 3 / 2
			if i%2 == 1 {
				replicas = opts.Size.Replicas / 2
			}
			if err := scale(ctx, cs, ns, fmt.Sprintf("app-%02d", i), replicas); err != nil {
				return res, err
			}
		}
	}
	if err := converge(ctx, cs, namespaces, timeout, quota); err != nil {
		return res, fmt.Errorf("after scaling: %w", err)
	}
	if res.States["scaled"], err = snapshot(ctx, cs, dyn, namespaces); err != nil {
		return res, err
	}
	logf("%s: scaled", b)

	// Delete every third Deployment and every Job: the garbage collector
	// deletes their ReplicaSets and pods.
	deleted := time.Now()
	background := metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationBackground)}
	for _, ns := range namespaces {
		for i := 0; i < opts.Size.Deployments; i += 3 {
			if err := cs.AppsV1().Deployments(ns).Delete(ctx, fmt.Sprintf("app-%02d", i), background); err != nil {
				return res, err
			}
		}
		for i := range opts.Size.Jobs {
			if err := cs.BatchV1().Jobs(ns).Delete(ctx, fmt.Sprintf("migrate-%d", i), background); err != nil {
				return res, err
			}
		}
	}
	if err := waitFor(ctx, timeout, func() (bool, error) { return collected(ctx, cs, dyn, namespaces) }); err != nil {
		return res, fmt.Errorf("garbage collection: %w", err)
	}
	res.Collected = time.Since(deleted)
	if err := converge(ctx, cs, namespaces, timeout, quota); err != nil {
		return res, fmt.Errorf("after the garbage collection: %w", err)
	}
	if res.States["collected"], err = snapshot(ctx, cs, dyn, namespaces); err != nil {
		return res, err
	}
	logf("%s: dependents collected %v after the deletions", b, res.Collected.Round(time.Millisecond))

	last := namespaces[len(namespaces)-1]
	deleted = time.Now()
	if err := cs.CoreV1().Namespaces().Delete(ctx, last, metav1.DeleteOptions{}); err != nil {
		return res, err
	}
	if err := waitFor(ctx, timeout, func() (bool, error) {
		_, err := cs.CoreV1().Namespaces().Get(ctx, last, metav1.GetOptions{})
		return apierrors.IsNotFound(err), ignoreNotFound(err)
	}); err != nil {
		return res, fmt.Errorf("deleting namespace %s: %w", last, err)
	}
	res.NamespaceGone = time.Since(deleted)
	namespaces = namespaces[:len(namespaces)-1]
	if err := converge(ctx, cs, namespaces, timeout, quota); err != nil {
		return res, fmt.Errorf("after deleting a namespace: %w", err)
	}
	if res.States["namespace deleted"], err = snapshot(ctx, cs, dyn, namespaces); err != nil {
		return res, err
	}
	if res.End, err = cm.usage(ctx); err != nil {
		return res, err
	}
	res.ChurnCPU = res.End.CPU - res.SyncCPU
	if err := cm.saveHeap(ctx, opts.Profiles, string(b)+"-end.heap"); err != nil {
		return res, err
	}
	logf("%s: namespace %s gone %v after its deletion; heap %d MiB, RSS %d MiB, churn CPU %v", b, last, res.NamespaceGone.Round(time.Millisecond),
		res.End.HeapBytes>>20, res.End.RSSBytes>>20, res.ChurnCPU)
	return res, nil
}

func ignoreNotFound(err error) error {
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

func scale(ctx context.Context, cs kubernetes.Interface, ns, name string, replicas int) error {
	s, err := cs.AppsV1().Deployments(ns).GetScale(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	s.Spec.Replicas = int32(replicas)
	_, err = cs.AppsV1().Deployments(ns).UpdateScale(ctx, name, s, metav1.UpdateOptions{})
	return err
}

// waitFor polls done every 250 ms until it is true, fails, or timeout.
func waitFor(ctx context.Context, timeout time.Duration, done func() (bool, error)) error {
	return wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, timeout, true, func(context.Context) (bool, error) { return done() })
}

// converge waits until every workload in namespaces has converged
// (convergedIn).
// converge waits until the workloads of every namespace have converged
// (convergedIn); quota false leaves the ResourceQuotas out.
func converge(ctx context.Context, cs kubernetes.Interface, namespaces []string, timeout time.Duration, quota bool) error {
	var why string
	err := waitFor(ctx, timeout, func() (bool, error) {
		for _, ns := range namespaces {
			w, err := convergedIn(ctx, cs, ns, quota)
			if err != nil {
				return false, err
			}
			if why = w; why != "" {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil && why != "" {
		return fmt.Errorf("%w: %s", err, why)
	}
	return err
}

// convergedIn returns "" when the workloads of ns have converged, and
// otherwise the first that has not: every Deployment has exactly its
// replicas, updated and available, and no other pods; every StatefulSet
// is ready; every Job not of a CronJob is complete; every Deployment's
// Service has an endpoint per replica, ready; every PodDisruptionBudget
// counts its pods; when quota, the ResourceQuotas have been computed.
func convergedIn(ctx context.Context, cs kubernetes.Interface, ns string, quota bool) (string, error) {
	deps, err := cs.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return "", err
	}
	pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return "", err
	}
	eps, err := cs.DiscoveryV1().EndpointSlices(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return "", err
	}
	ready := map[string]int{}
	for _, s := range eps.Items {
		for _, e := range s.Endpoints {
			if e.Conditions.Ready != nil && *e.Conditions.Ready {
				ready[s.Labels["kubernetes.io/service-name"]]++
			}
		}
	}
	appPods := map[string]int{}
	for _, p := range pods.Items {
		appPods[p.Labels["app.kubernetes.io/name"]]++
	}
	total := map[string]int{}
	for _, s := range eps.Items {
		total[s.Labels["kubernetes.io/service-name"]] += len(s.Endpoints)
	}
	svcs, err := cs.CoreV1().Services(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return "", err
	}
	for _, svc := range svcs.Items {
		// Every pod the Service selects is an endpoint, ready, and no
		// other (a deleted Deployment's Service has none).
		if n := appPods[svc.Name]; total[svc.Name] != n || ready[svc.Name] != n {
			return fmt.Sprintf("%s/%s: %d endpoints, %d ready, for %d pods", ns, svc.Name, total[svc.Name], ready[svc.Name], n), nil
		}
	}
	for _, d := range deps.Items {
		r := *d.Spec.Replicas
		if !deploymentDone(&d) || appPods[d.Name] != int(r) || ready[d.Name] != int(r) {
			return fmt.Sprintf("%s/%s: replicas %d, status %+v, pods %d, ready endpoints %d", ns, d.Name, r, d.Status, appPods[d.Name], ready[d.Name]), nil
		}
	}
	sss, err := cs.AppsV1().StatefulSets(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return "", err
	}
	for _, s := range sss.Items {
		if s.Status.ReadyReplicas != *s.Spec.Replicas || ready[s.Name] != int(*s.Spec.Replicas) {
			return fmt.Sprintf("%s/%s: ready %d of %d", ns, s.Name, s.Status.ReadyReplicas, *s.Spec.Replicas), nil
		}
	}
	jobs, err := cs.BatchV1().Jobs(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return "", err
	}
	for _, j := range jobs.Items {
		if len(j.OwnerReferences) == 0 && j.Status.CompletionTime == nil {
			return fmt.Sprintf("%s/%s: not complete (succeeded %d)", ns, j.Name, j.Status.Succeeded), nil
		}
	}
	pdbs, err := cs.PolicyV1().PodDisruptionBudgets(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return "", err
	}
	for _, p := range pdbs.Items {
		if p.Status.ObservedGeneration != p.Generation || int(p.Status.ExpectedPods) != appPods[p.Name] || p.Status.CurrentHealthy != p.Status.ExpectedPods {
			return fmt.Sprintf("%s/%s: pdb %+v, pods %d", ns, p.Name, p.Status, appPods[p.Name]), nil
		}
	}
	cjs, err := cs.BatchV1().CronJobs(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return "", err
	}
	for _, cj := range cjs.Items {
		if cj.Status.LastSuccessfulTime == nil {
			return fmt.Sprintf("%s/%s: no Job of the CronJob has succeeded yet", ns, cj.Name), nil
		}
	}
	if !quota {
		return "", nil
	}
	return quotaConverged(ctx, cs, ns, pods.Items)
}

// quotaConverged says whether the ResourceQuotas of ns count what the
// namespace holds: the pods in the compute quota's scope (not terminated,
// no deadline) and their CPU requests, its ConfigMaps, Secrets and
// Services.
func quotaConverged(ctx context.Context, cs kubernetes.Interface, ns string, pods []corev1.Pod) (string, error) {
	want := corev1.ResourceList{}
	cpu, n := resource.Quantity{}, 0
	for _, p := range pods {
		if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed || p.Spec.ActiveDeadlineSeconds != nil {
			continue
		}
		n++
		for _, c := range p.Spec.Containers {
			cpu.Add(c.Resources.Requests[corev1.ResourceCPU])
		}
	}
	want["requests.cpu"] = cpu
	want["pods"] = *resource.NewQuantity(int64(n), resource.DecimalSI)
	cms, err := cs.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return "", err
	}
	secrets, err := cs.CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return "", err
	}
	svcs, err := cs.CoreV1().Services(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return "", err
	}
	want["count/configmaps"] = *resource.NewQuantity(int64(len(cms.Items)), resource.DecimalSI)
	want["count/secrets"] = *resource.NewQuantity(int64(len(secrets.Items)), resource.DecimalSI)
	want["services"] = *resource.NewQuantity(int64(len(svcs.Items)), resource.DecimalSI)
	quotas, err := cs.CoreV1().ResourceQuotas(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return "", err
	}
	for _, q := range quotas.Items {
		for r, w := range want {
			if _, counted := q.Spec.Hard[r]; !counted {
				continue
			}
			if got, ok := q.Status.Used[r]; !ok || got.Cmp(w) != 0 {
				return fmt.Sprintf("%s/%s: quota uses %s %v, the namespace %s", ns, q.Name, r, got.String(), w.String()), nil
			}
		}
	}
	return "", nil
}

// deploymentsAvailable says whether every Deployment in namespaces is
// done (deploymentDone).
func deploymentsAvailable(ctx context.Context, cs kubernetes.Interface, namespaces []string) (bool, error) {
	for _, ns := range namespaces {
		deps, err := cs.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		for i := range deps.Items {
			if !deploymentDone(&deps.Items[i]) {
				return false, nil
			}
		}
	}
	return true, nil
}

func deploymentDone(d *appsv1.Deployment) bool {
	r := *d.Spec.Replicas
	s := d.Status
	return s.ObservedGeneration == d.Generation && s.Replicas == r && s.UpdatedReplicas == r && s.AvailableReplicas == r && s.ReadyReplicas == r
}

// collected says whether the garbage collector has deleted the dependents
// of the Deployments and Jobs Run deleted: no ReplicaSet, pod or Widget of
// them is left.
func collected(ctx context.Context, cs kubernetes.Interface, dyn dynamic.Interface, namespaces []string) (bool, error) {
	for _, ns := range namespaces {
		ws, err := dyn.Resource(Widgets).Namespace(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		for _, w := range ws.Items {
			var i int
			if _, err := fmt.Sscanf(w.GetName(), "app-%02d", &i); err == nil && i%3 == 0 {
				return false, nil
			}
		}
		pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		for _, p := range pods.Items {
			app := p.Labels["app.kubernetes.io/name"]
			if strings.HasPrefix(app, "migrate-") {
				return false, nil
			}
			var i int
			if _, err := fmt.Sscanf(app, "app-%02d", &i); err == nil && i%3 == 0 {
				return false, nil
			}
		}
		rss, err := cs.AppsV1().ReplicaSets(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		for _, rs := range rss.Items {
			var i int
			if _, err := fmt.Sscanf(rs.Labels["app.kubernetes.io/name"], "app-%02d", &i); err == nil && i%3 == 0 {
				return false, nil
			}
		}
	}
	return true, nil
}
