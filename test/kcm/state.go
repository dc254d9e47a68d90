package kcm

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
)

// State is what the controller manager left on the server, in terms that
// two runs can compare: names the controllers generate (ReplicaSets' and
// pods' suffixes, EndpointSlices', Jobs' of CronJobs) are replaced by
// their owners and counts. Each line of Lines is one fact, sorted.
type State struct {
	Lines []string
}

// Diff returns the facts of s missing from o ("-") and of o missing from
// s ("+"), or nil when they are equal.
func (s State) Diff(o State) []string {
	in := func(x []string) map[string]bool {
		m := map[string]bool{}
		for _, l := range x {
			m[l] = true
		}
		return m
	}
	a, b := in(s.Lines), in(o.Lines)
	var out []string
	for _, l := range s.Lines {
		if !b[l] {
			out = append(out, "- "+l)
		}
	}
	for _, l := range o.Lines {
		if !a[l] {
			out = append(out, "+ "+l)
		}
	}
	return out
}

// snapshot reads the state of the harness's namespaces.
func snapshot(ctx context.Context, cs kubernetes.Interface, dyn dynamic.Interface, namespaces []string) (State, error) {
	var lines []string
	add := func(format string, args ...any) { lines = append(lines, fmt.Sprintf(format, args...)) }
	list := metav1.ListOptions{}
	for _, ns := range namespaces {
		deps, err := cs.AppsV1().Deployments(ns).List(ctx, list)
		if err != nil {
			return State{}, err
		}
		for _, d := range deps.Items {
			add("%s deployment %s: replicas %d ready %d available %d updated %d observed %v", ns, d.Name, *d.Spec.Replicas,
				d.Status.ReadyReplicas, d.Status.AvailableReplicas, d.Status.UpdatedReplicas, d.Status.ObservedGeneration == d.Generation)
		}
		rss, err := cs.AppsV1().ReplicaSets(ns).List(ctx, list)
		if err != nil {
			return State{}, err
		}
		for _, rs := range rss.Items {
			// A ReplicaSet's name is its Deployment's and its template's
			// hash: the same in both runs.
			add("%s replicaset %s of %s: replicas %d ready %d", ns, rs.Name, owners(rs.OwnerReferences), *rs.Spec.Replicas, rs.Status.ReadyReplicas)
		}
		sss, err := cs.AppsV1().StatefulSets(ns).List(ctx, list)
		if err != nil {
			return State{}, err
		}
		for _, s := range sss.Items {
			add("%s statefulset %s: ready %d current %d", ns, s.Name, s.Status.ReadyReplicas, s.Status.CurrentReplicas)
		}
		pods, err := cs.CoreV1().Pods(ns).List(ctx, list)
		if err != nil {
			return State{}, err
		}
		byOwner := map[string]int{}
		for _, p := range pods.Items {
			if cronJobPod(p.OwnerReferences) {
				continue // they come and go with the clock
			}
			owner := owners(p.OwnerReferences)
			byOwner[fmt.Sprintf("of %s, %s, deleting %v", owner, p.Status.Phase, p.DeletionTimestamp != nil)]++
		}
		for _, k := range slices.Sorted(maps.Keys(byOwner)) {
			add("%s pods %s: %d", ns, k, byOwner[k])
		}
		eps, err := cs.DiscoveryV1().EndpointSlices(ns).List(ctx, list)
		if err != nil {
			return State{}, err
		}
		perService := map[string][2]int{}
		for _, s := range eps.Items {
			c := perService[s.Labels["kubernetes.io/service-name"]]
			for _, e := range s.Endpoints {
				c[0]++
				if e.Conditions.Ready != nil && *e.Conditions.Ready {
					c[1]++
				}
			}
			perService[s.Labels["kubernetes.io/service-name"]] = c
		}
		for _, svc := range sortedKeys(perService) {
			add("%s endpoints of service %s: %d, ready %d", ns, svc, perService[svc][0], perService[svc][1])
		}
		jobs, err := cs.BatchV1().Jobs(ns).List(ctx, list)
		if err != nil {
			return State{}, err
		}
		for _, j := range jobs.Items {
			if len(j.OwnerReferences) > 0 {
				continue // a CronJob's: how many exist depends on the clock
			}
			add("%s job %s: succeeded %d complete %v", ns, j.Name, j.Status.Succeeded, j.Status.CompletionTime != nil)
		}
		cjs, err := cs.BatchV1().CronJobs(ns).List(ctx, list)
		if err != nil {
			return State{}, err
		}
		for _, cj := range cjs.Items {
			add("%s cronjob %s: scheduled %v", ns, cj.Name, cj.Status.LastScheduleTime != nil)
		}
		pdbs, err := cs.PolicyV1().PodDisruptionBudgets(ns).List(ctx, list)
		if err != nil {
			return State{}, err
		}
		for _, p := range pdbs.Items {
			add("%s pdb %s: healthy %d desired %d expected %d allowed %d", ns, p.Name, p.Status.CurrentHealthy, p.Status.DesiredHealthy,
				p.Status.ExpectedPods, p.Status.DisruptionsAllowed)
		}
		quotas, err := cs.CoreV1().ResourceQuotas(ns).List(ctx, list)
		if err != nil {
			return State{}, err
		}
		for _, q := range quotas.Items {
			var used []string
			for _, r := range sortedKeys(q.Status.Used) {
				if r == "count/jobs.batch" {
					continue // CronJobs' Jobs come and go with the clock
				}
				v := q.Status.Used[r]
				used = append(used, fmt.Sprintf("%s=%s", r, v.String()))
			}
			add("%s quota %s: used %s", ns, q.Name, strings.Join(used, ","))
		}
		ws, err := dyn.Resource(Widgets).Namespace(ns).List(ctx, list)
		if err != nil {
			return State{}, err
		}
		for _, w := range ws.Items {
			add("%s widget %s of %s", ns, w.GetName(), owners(w.GetOwnerReferences()))
		}
		sas, err := cs.CoreV1().ServiceAccounts(ns).List(ctx, list)
		if err != nil {
			return State{}, err
		}
		for _, sa := range sas.Items {
			add("%s serviceaccount %s", ns, sa.Name)
		}
		cms, err := cs.CoreV1().ConfigMaps(ns).List(ctx, list)
		if err != nil {
			return State{}, err
		}
		add("%s configmaps: %d, root CA %v", ns, len(cms.Items), slices.ContainsFunc(cms.Items, func(c corev1.ConfigMap) bool { return c.Name == "kube-root-ca.crt" }))
	}
	sort.Strings(lines)
	return State{Lines: lines}, nil
}

// owners renders owner references without UIDs.
func owners(refs []metav1.OwnerReference) string {
	if len(refs) == 0 {
		return "nobody"
	}
	var out []string
	for _, r := range refs {
		out = append(out, r.Kind+"/"+r.Name)
	}
	return strings.Join(out, "+")
}

func cronJobPod(refs []metav1.OwnerReference) bool {
	for _, r := range refs {
		if r.Kind == "Job" && strings.HasPrefix(r.Name, "report-") {
			return true
		}
	}
	return false
}

func sortedKeys[V any, K ~string](m map[K]V) []K {
	return slices.Sorted(maps.Keys(m))
}

// missingFrom returns the lines of a that b lacks.
func missingFrom(a, b []string) []string {
	in := map[string]bool{}
	for _, l := range b {
		in[l] = true
	}
	var out []string
	for _, l := range a {
		if !in[l] {
			out = append(out, l)
		}
	}
	return out
}

func joinLines(lines []string) string { return strings.Join(lines, "\n") }
