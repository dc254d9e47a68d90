package kcm

import (
	"context"
	"fmt"
	"hash/fnv"
	"sync"
	"sync/atomic"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
)

// NodeName returns the name of node i.
func NodeName(i int) string { return fmt.Sprintf("node-%03d", i) }

// createNode registers node i as a kubelet would: the Node, Ready, with its
// capacity and address, and its Lease in kube-node-lease.
func createNode(ctx context.Context, cs kubernetes.Interface, i int) error {
	name := NodeName(i)
	capacity := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("32"), corev1.ResourceMemory: resource.MustParse("128Gi"),
		corev1.ResourcePods: resource.MustParse("500")}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
		"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
		"topology.kubernetes.io/zone": fmt.Sprintf("zone-%d", i%3)}}}
	node, err := cs.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
	if err != nil {
		return err
	}
	node.Status = corev1.NodeStatus{Capacity: capacity, Allocatable: capacity,
		Addresses:  []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: fmt.Sprintf("10.1.%d.%d", i/250, i%250+1)}, {Type: corev1.NodeHostName, Address: name}},
		Conditions: nodeConditions(), NodeInfo: corev1.NodeSystemInfo{KubeletVersion: "v1.37.2", OperatingSystem: "linux", Architecture: "amd64"}}
	if _, err := cs.CoreV1().Nodes().UpdateStatus(ctx, node, metav1.UpdateOptions{}); err != nil {
		return err
	}
	lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: corev1.NamespaceNodeLease,
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: name, UID: node.UID}}},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(name), LeaseDurationSeconds: ptr.To[int32](40), RenewTime: &metav1.MicroTime{Time: time.Now()}}}
	_, err = cs.CoordinationV1().Leases(corev1.NamespaceNodeLease).Create(ctx, lease, metav1.CreateOptions{})
	return err
}

func nodeConditions() []corev1.NodeCondition {
	now := metav1.Now()
	c := func(t corev1.NodeConditionType, s corev1.ConditionStatus, reason string) corev1.NodeCondition {
		return corev1.NodeCondition{Type: t, Status: s, Reason: reason, LastHeartbeatTime: now, LastTransitionTime: now}
	}
	return []corev1.NodeCondition{c(corev1.NodeReady, corev1.ConditionTrue, "KubeletReady"),
		c(corev1.NodeMemoryPressure, corev1.ConditionFalse, "KubeletHasSufficientMemory"),
		c(corev1.NodeDiskPressure, corev1.ConditionFalse, "KubeletHasNoDiskPressure"),
		c(corev1.NodePIDPressure, corev1.ConditionFalse, "KubeletHasSufficientPID")}
}

// agent plays the scheduler and the kubelets of the harness's nodes: it
// renews the nodes' Leases, binds every unscheduled pod to a node (by its
// name's hash), starts it (Running and Ready, with an IP; a Job's pods run
// to completion) and, once a pod is being deleted, deletes it for good as
// a kubelet does when its containers have stopped. Both builds of the
// controller manager see the same agent.
type agent struct {
	cs    kubernetes.Interface
	nodes int
	log   klog.Logger
	// ips hands out pod IPs.
	ips atomic.Uint32
	// writes counts the agent's API writes; failures those that failed
	// with anything but a conflict or not-found.
	writes, failures atomic.Int64
}

// run runs the agent with workers goroutines until ctx ends.
func (a *agent) run(ctx context.Context, workers int) {
	var wg sync.WaitGroup
	wg.Go(func() { a.renewLeases(ctx) })
	f := informers.NewSharedInformerFactory(a.cs, 0)
	pods := f.Core().V1().Pods()
	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]())
	enqueue := func(obj any) {
		if key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
			q.Add(key)
		}
	}
	if _, err := pods.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: enqueue, UpdateFunc: func(_, o any) { enqueue(o) }}); err != nil {
		a.log.Error(err, "agent: adding its handler")
	}
	f.Start(ctx.Done())
	f.WaitForCacheSync(ctx.Done())
	for range workers {
		wg.Go(func() {
			for {
				key, shutdown := q.Get()
				if shutdown {
					return
				}
				ns, name, _ := cache.SplitMetaNamespaceKey(key)
				pod, err := pods.Lister().Pods(ns).Get(name)
				if err == nil {
					err = a.sync(ctx, pod)
				}
				switch {
				case err == nil || apierrors.IsNotFound(err):
					q.Forget(key)
				case apierrors.IsConflict(err):
					q.AddRateLimited(key)
				default:
					if ctx.Err() == nil {
						a.failures.Add(1)
						a.log.Error(err, "agent: syncing a pod", "pod", key)
					}
					q.AddRateLimited(key)
				}
				q.Done(key)
			}
		})
	}
	<-ctx.Done()
	q.ShutDown()
	f.Shutdown()
	wg.Wait()
}

// sync moves pod one step on: deleted, bound, or started.
func (a *agent) sync(ctx context.Context, pod *corev1.Pod) error {
	switch {
	case pod.DeletionTimestamp != nil:
		a.writes.Add(1)
		return a.cs.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0),
			Preconditions: &metav1.Preconditions{UID: &pod.UID}})
	case pod.Spec.NodeName == "":
		h := fnv.New32a()
		h.Write([]byte(pod.Namespace + "/" + pod.Name))
		a.writes.Add(1)
		return a.cs.CoreV1().Pods(pod.Namespace).Bind(ctx, &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: pod.Name, UID: pod.UID},
			Target: corev1.ObjectReference{Kind: "Node", Name: NodeName(int(h.Sum32()) % a.nodes)}}, metav1.CreateOptions{})
	case pod.Status.Phase == corev1.PodPending || pod.Status.Phase == "":
		a.writes.Add(1)
		_, err := a.cs.CoreV1().Pods(pod.Namespace).UpdateStatus(ctx, a.started(pod), metav1.UpdateOptions{})
		return err
	}
	return nil
}

// started returns pod as its kubelet reports it once its containers run
// (or, for a Job's pod, have run to completion).
func (a *agent) started(pod *corev1.Pod) *corev1.Pod {
	p := pod.DeepCopy()
	now := metav1.Now()
	ip := a.ips.Add(1)
	done := isJobPod(p)
	p.Status.Phase = corev1.PodRunning
	ready := corev1.ConditionTrue
	if done {
		p.Status.Phase, ready = corev1.PodSucceeded, corev1.ConditionFalse
	}
	p.Status.HostIP = "10.1.0.1"
	p.Status.PodIP = fmt.Sprintf("10.%d.%d.%d", 64+ip>>16, ip>>8&255, ip&255)
	p.Status.PodIPs = []corev1.PodIP{{IP: p.Status.PodIP}}
	p.Status.HostIPs = []corev1.HostIP{{IP: p.Status.HostIP}}
	p.Status.StartTime = &now
	p.Status.QOSClass = corev1.PodQOSBurstable
	cond := func(t corev1.PodConditionType, s corev1.ConditionStatus) corev1.PodCondition {
		return corev1.PodCondition{Type: t, Status: s, LastTransitionTime: now}
	}
	p.Status.Conditions = []corev1.PodCondition{cond(corev1.PodReadyToStartContainers, corev1.ConditionTrue),
		cond(corev1.PodInitialized, corev1.ConditionTrue), cond(corev1.PodReady, ready),
		cond(corev1.ContainersReady, ready), cond(corev1.PodScheduled, corev1.ConditionTrue)}
	p.Status.ContainerStatuses = nil
	for i, c := range p.Spec.Containers {
		st := corev1.ContainerStatus{Name: c.Name, Image: c.Image, ImageID: c.Image + "@sha256:" + fmt.Sprintf("%064x", i+1),
			ContainerID: fmt.Sprintf("containerd://%016x%048x", ip, i), Ready: !done, Started: ptr.To(!done)}
		if done {
			st.State.Terminated = &corev1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed", StartedAt: now, FinishedAt: now}
		} else {
			st.State.Running = &corev1.ContainerStateRunning{StartedAt: now}
		}
		p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, st)
	}
	return p
}

func isJobPod(p *corev1.Pod) bool {
	for _, o := range p.OwnerReferences {
		if o.Kind == "Job" {
			return true
		}
	}
	return false
}

// renewLeases renews every node's Lease every 10 seconds, as kubelets do,
// so that the node lifecycle controller keeps them Ready.
func (a *agent) renewLeases(ctx context.Context) {
	t := time.NewTicker(10 * time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		for i := range a.nodes {
			l, err := a.cs.CoordinationV1().Leases(corev1.NamespaceNodeLease).Get(ctx, NodeName(i), metav1.GetOptions{})
			if err == nil {
				l.Spec.RenewTime = &metav1.MicroTime{Time: time.Now()}
				_, err = a.cs.CoordinationV1().Leases(corev1.NamespaceNodeLease).Update(ctx, l, metav1.UpdateOptions{})
			}
			if err != nil && ctx.Err() == nil {
				a.log.Error(err, "agent: renewing a node's lease", "node", NodeName(i))
			}
		}
	}
}
