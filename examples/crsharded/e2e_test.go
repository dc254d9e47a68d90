package crsharded_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/listwatch/listwatch/examples/crsharded"
	"github.com/listwatch/listwatch/examples/sharded"
	"github.com/listwatch/listwatch/internal/testing/testapiserver"
	"github.com/listwatch/listwatch/internal/testing/testproc"
	"github.com/listwatch/listwatch/shard"
)

// The ring's timing: short, so that a crash is taken over within seconds
// (as in examples/sharded's TestReplicaProcesses).
const (
	e2eNamespace = "crsharded"
	e2eRing      = "cms"
	e2eSlices    = 256
	e2eLease     = 2 * time.Second
	e2eRenew     = 500 * time.Millisecond
	e2eObjects   = 300
	// e2eWait bounds every wait for the replicas to converge.
	e2eWait = 30 * time.Second
)

// TestManagerProcesses is the multi-process proof of crcache's sharding
// on a real kube-apiserver (ShardedListAndWatch on): the replica command,
// a controller-runtime manager on the sharded cache with a controller
// built by the builder, runs as separate OS processes. Three replicas
// start; one is killed with SIGKILL; a fourth joins; one leaves with
// SIGTERM. At each step the test creates, updates and deletes ConfigMaps,
// then waits until every live replica has the ring's assignment, caches
// exactly the ConfigMaps it owns under it, and every ConfigMap carries
// the hash of its final data. It logs each replica's share of the cache.
// Skipped under -short.
func TestManagerProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real kube-apiserver and manager processes")
	}
	bin := testproc.Build(t, "github.com/listwatch/listwatch/examples/crsharded/replica")
	start := time.Now()
	srv, err := testapiserver.Start(t.Context(), t, testapiserver.Options{
		ExtraAPIServerArgs: []string{"--feature-gates=ShardedListAndWatch=true"},
	})
	if err != nil {
		t.Fatal(err)
	}
	e := &e2e{t: t, bin: bin, cs: kubernetes.NewForConfigOrDie(srv.AdminConfig()), dir: t.TempDir(),
		live: map[string]*replica{}}
	e.kubeconfig = e.writeKubeconfig(srv)
	if _, err := e.cs.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: e2eNamespace}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for range e2eObjects {
		e.create()
	}
	t.Logf("server up and %d ConfigMaps written in %v", e2eObjects, time.Since(start).Round(100*time.Millisecond))

	for _, id := range []string{"r0", "r1", "r2"} {
		e.start(id)
	}
	e.converge("3 replicas start")

	e.kill("r1")
	e.churn()
	e.converge("kill -9 r1")

	e.start("r3")
	e.churn()
	e.converge("r3 joins (2 → 3)")

	e.stop("r0")
	e.churn()
	e.converge("r0 leaves (3 → 2)")

	for _, id := range slices.Sorted(maps.Keys(e.live)) {
		e.stop(id)
	}
	t.Logf("wall time from the server's start %v", time.Since(start).Round(100*time.Millisecond))
}

// e2e is one run: the server's client and the replicas.
type e2e struct {
	t          *testing.T
	bin        string
	cs         kubernetes.Interface
	dir        string
	kubeconfig string
	live       map[string]*replica
	// next numbers the ConfigMaps created.
	next int
}

// replica is one manager process and the last of its reports.
type replica struct {
	*testproc.Proc

	mu      sync.Mutex
	members []string        // of its last assignment
	cache   crsharded.Event // its last "cache" report
}

// writeKubeconfig writes a kubeconfig for the server's admin.
func (e *e2e) writeKubeconfig(srv *testapiserver.Server) string {
	admin := srv.AdminConfig()
	c := clientcmdapi.NewConfig()
	c.Clusters["e2e"] = &clientcmdapi.Cluster{Server: admin.Host, CertificateAuthorityData: admin.CAData}
	c.AuthInfos["admin"] = &clientcmdapi.AuthInfo{Token: admin.BearerToken}
	c.Contexts["e2e"] = &clientcmdapi.Context{Cluster: "e2e", AuthInfo: "admin"}
	c.CurrentContext = "e2e"
	path := filepath.Join(e.dir, "kubeconfig")
	if err := clientcmd.WriteToFile(*c, path); err != nil {
		e.t.Fatal(err)
	}
	return path
}

// start runs replica id as a process; it is killed when the test ends.
func (e *e2e) start(id string) {
	t := e.t
	r := &replica{}
	cmd := exec.Command(e.bin, "-kubeconfig", e.kubeconfig, "-namespace", e2eNamespace, "-ring", e2eRing,
		"-identity", id, "-slices", fmt.Sprint(e2eSlices), "-lease-duration", e2eLease.String(),
		"-renew-interval", e2eRenew.String())
	r.Proc = testproc.Start(t, id, e.dir, cmd, func(line []byte) {
		var ev crsharded.Event
		if err := json.Unmarshal(line, &ev); err != nil {
			t.Errorf("%s: bad report line %q: %v", id, line, err)
			return
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		switch ev.Ev {
		case "change":
			r.members = ev.Members
		case "cache":
			r.cache = ev
		}
	})
	e.live[id] = r
}

// kill ends replica id with SIGKILL: its Lease stays until it expires.
func (e *e2e) kill(id string) {
	if err := e.live[id].Kill(); err != nil {
		e.t.Fatal(err)
	}
	delete(e.live, id)
}

// stop ends replica id with SIGTERM and waits for it to exit: the
// manager stops, then its cache leaves the ring (its Lease deleted).
func (e *e2e) stop(id string) {
	if err := e.live[id].Stop(e2eWait); err != nil {
		e.t.Fatalf("%s: %v", id, err)
	}
	delete(e.live, id)
	if _, err := e.cs.CoordinationV1().Leases(e2eNamespace).Get(e.t.Context(), e2eRing+"-"+id, metav1.GetOptions{}); err == nil {
		e.t.Errorf("%s's Lease is still there after a graceful exit", id)
	}
}

// create writes a new ConfigMap.
func (e *e2e) create() {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%04d", e.next)},
		Data: map[string]string{"n": fmt.Sprint(e.next)}}
	e.next++
	if _, err := e.cs.CoreV1().ConfigMaps(e2eNamespace).Create(e.t.Context(), cm, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

// churn, right after a change of the ring, updates the data of 30
// ConfigMaps, deletes 10 and creates 10.
func (e *e2e) churn() {
	t, ctx := e.t, e.t.Context()
	list, err := e.cs.CoreV1().ConfigMaps(e2eNamespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var cms []corev1.ConfigMap
	for _, cm := range list.Items {
		if strings.HasPrefix(cm.Name, "cm-") {
			cms = append(cms, cm)
		}
	}
	for i := range 40 {
		cm := cms[(i*7+e.next)%len(cms)]
		if i < 30 {
			cm.Data = map[string]string{"n": cm.Data["n"], "v": fmt.Sprint(e.next, i)}
			cm.ResourceVersion = "" // last write wins over the replicas' annotation
			if _, err := e.cs.CoreV1().ConfigMaps(e2eNamespace).Update(ctx, &cm, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := e.cs.CoreV1().ConfigMaps(e2eNamespace).Delete(ctx, cm.Name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for range 10 {
		e.create()
	}
}

// converge waits until every live replica has the assignment of the live
// replicas, caches exactly the ConfigMaps it owns under it, and every
// ConfigMap carries the hash of its data; then it logs the shares.
func (e *e2e) converge(step string) {
	t := e.t
	t.Helper()
	start := time.Now()
	ids := slices.Sorted(maps.Keys(e.live))
	a := shard.MustAssign(ids, shard.Options{Slices: e2eSlices})
	var why string
	for deadline := start.Add(e2eWait); ; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not converged within %v: %s", step, e2eWait, why)
		}
		list, err := e.cs.CoreV1().ConfigMaps(e2eNamespace).List(t.Context(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		want := map[string][]string{}
		for _, id := range ids {
			want[id] = []string{}
		}
		why = ""
		for _, cm := range list.Items {
			if !strings.HasPrefix(cm.Name, "cm-") {
				continue
			}
			if got, h := cm.Annotations[crsharded.HashAnnotation], sharded.ContentHash(cm.Data); got != h && why == "" {
				why = fmt.Sprintf("%s carries %q, want %q", cm.Name, got, h)
			}
			owner := a.OwnerOfKey(string(cm.UID))
			want[owner] = append(want[owner], cm.Name)
		}
		for _, id := range ids {
			r := e.live[id]
			select {
			case <-r.Exited():
				t.Fatalf("%s: replica %s exited", step, id)
			default:
			}
			r.mu.Lock()
			members, keys := r.members, r.cache.Keys
			r.mu.Unlock()
			slices.Sort(want[id])
			switch {
			case !slices.Equal(members, ids):
				why = fmt.Sprintf("%s's ring is %v, want %v", id, members, ids)
			case !slices.Equal(keys, want[id]):
				why = fmt.Sprintf("%s caches %d ConfigMaps, want its %d", id, len(keys), len(want[id]))
			}
		}
		if why != "" {
			continue
		}
		total := 0
		for _, id := range ids {
			total += len(want[id])
		}
		var shares []string
		for _, id := range ids {
			r := e.live[id]
			r.mu.Lock()
			shares = append(shares, fmt.Sprintf("%s %d (%.2f of 1/%d; %d reconciles, %d patches, %d of a key not owned)", id, len(r.cache.Keys),
				float64(len(r.cache.Keys))*float64(len(ids))/float64(total), len(ids), r.cache.Reconciles, r.cache.Patches, r.cache.NotOwned))
			r.mu.Unlock()
		}
		t.Logf("%s: converged in %v; %d ConfigMaps cached: %s", step, time.Since(start).Round(100*time.Millisecond),
			total, strings.Join(shares, ", "))
		return
	}
}
