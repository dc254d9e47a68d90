package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/listwatch/listwatch/internal/testing/testapiserver"
)

// The real-server benchmark's custom resource (issue 37): Argo CD
// Applications, the custom resource a GitOps cluster holds most of and
// the classic large one, one per Helm release of realTemplateOf, all in
// the argocd namespace. Each is created by argocd-server (its spec: the
// release's chart in its team's repository, Helm values files and
// parameters, automated sync) and its status written by
// argocd-application-controller (a second manager): sync and health, the
// release's managed resources, the last sync's operation state with a
// result per resource, a history of three to eight revisions, images.
// Strings that repeat across Applications (kinds, groups, "Synced",
// "Healthy", repository URLs, the cluster's URL, sync options) sit beside
// unique ones (names, revisions, timestamps). The CRD preserves unknown
// fields, as Argo CD's does for most of its schema.

// applicationKind is the kind of the corpus's custom resource.
var applicationKind = schema.GroupVersionKind{Group: "argoproj.io", Version: "v1alpha1", Kind: "Application"}

// applicationsNS is where the Applications live.
const applicationsNS = "argocd"

// application is the Go type of an Application, the fields the corpus
// writes (Argo CD's own type has more, all optional).
type application struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              appSpec   `json:"spec"`
	Status            appStatus `json:"status,omitempty"`
}

type appSpec struct {
	Project     string         `json:"project"`
	Source      appSource      `json:"source"`
	Destination appDestination `json:"destination"`
	SyncPolicy  *appSyncPolicy `json:"syncPolicy,omitempty"`
}

type appSource struct {
	RepoURL        string   `json:"repoURL"`
	Path           string   `json:"path,omitempty"`
	TargetRevision string   `json:"targetRevision,omitempty"`
	Helm           *appHelm `json:"helm,omitempty"`
}

type appHelm struct {
	ReleaseName string         `json:"releaseName,omitempty"`
	ValueFiles  []string       `json:"valueFiles,omitempty"`
	Parameters  []appHelmParam `json:"parameters,omitempty"`
}

type appHelmParam struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

type appDestination struct {
	Server    string `json:"server,omitempty"`
	Namespace string `json:"namespace,omitempty"`
}

type appSyncPolicy struct {
	Automated   *appAutomated `json:"automated,omitempty"`
	SyncOptions []string      `json:"syncOptions,omitempty"`
	Retry       *appRetry     `json:"retry,omitempty"`
}

type appAutomated struct {
	Prune    bool `json:"prune,omitempty"`
	SelfHeal bool `json:"selfHeal,omitempty"`
}

type appRetry struct {
	Limit   int64            `json:"limit,omitempty"`
	Backoff *appRetryBackoff `json:"backoff,omitempty"`
}

type appRetryBackoff struct {
	Duration    string `json:"duration,omitempty"`
	Factor      int64  `json:"factor,omitempty"`
	MaxDuration string `json:"maxDuration,omitempty"`
}

type appStatus struct {
	Resources           []appResourceStatus `json:"resources,omitempty"`
	Sync                appSyncStatus       `json:"sync,omitempty"`
	Health              appHealth           `json:"health,omitempty"`
	History             []appRevision       `json:"history,omitempty"`
	ReconciledAt        *metav1.Time        `json:"reconciledAt,omitempty"`
	OperationState      *appOperationState  `json:"operationState,omitempty"`
	SourceType          string              `json:"sourceType,omitempty"`
	Summary             appSummary          `json:"summary,omitempty"`
	ControllerNamespace string              `json:"controllerNamespace,omitempty"`
}

type appResourceStatus struct {
	Group     string     `json:"group,omitempty"`
	Version   string     `json:"version,omitempty"`
	Kind      string     `json:"kind,omitempty"`
	Namespace string     `json:"namespace,omitempty"`
	Name      string     `json:"name,omitempty"`
	Status    string     `json:"status,omitempty"`
	Health    *appHealth `json:"health,omitempty"`
}

type appHealth struct {
	Status string `json:"status,omitempty"`
}

type appSyncStatus struct {
	Status     string        `json:"status"`
	ComparedTo appComparedTo `json:"comparedTo,omitempty"`
	Revision   string        `json:"revision,omitempty"`
}

type appComparedTo struct {
	Source      appSource      `json:"source"`
	Destination appDestination `json:"destination"`
}

type appRevision struct {
	Revision        string       `json:"revision"`
	DeployedAt      metav1.Time  `json:"deployedAt"`
	ID              int64        `json:"id"`
	Source          appSource    `json:"source,omitempty"`
	DeployStartedAt *metav1.Time `json:"deployStartedAt,omitempty"`
	InitiatedBy     appInitiator `json:"initiatedBy,omitempty"`
}

type appInitiator struct {
	Username  string `json:"username,omitempty"`
	Automated bool   `json:"automated,omitempty"`
}

type appOperationState struct {
	Operation  appOperation      `json:"operation"`
	Phase      string            `json:"phase"`
	Message    string            `json:"message,omitempty"`
	SyncResult *appSyncResult    `json:"syncResult,omitempty"`
	StartedAt  metav1.Time       `json:"startedAt"`
	FinishedAt *metav1.Time      `json:"finishedAt,omitempty"`
	RetryCount int64             `json:"retryCount,omitempty"`
	Extra      map[string]string `json:"extra,omitempty"`
}

type appOperation struct {
	Sync        *appSyncOperation `json:"sync,omitempty"`
	InitiatedBy appInitiator      `json:"initiatedBy,omitempty"`
	Retry       appRetry          `json:"retry,omitempty"`
}

type appSyncOperation struct {
	Revision    string   `json:"revision,omitempty"`
	SyncOptions []string `json:"syncOptions,omitempty"`
}

type appSyncResult struct {
	Resources []appResourceResult `json:"resources,omitempty"`
	Revision  string              `json:"revision"`
	Source    appSource           `json:"source,omitempty"`
}

type appResourceResult struct {
	Group     string `json:"group"`
	Version   string `json:"version"`
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Status    string `json:"status,omitempty"`
	Message   string `json:"message,omitempty"`
	HookPhase string `json:"hookPhase,omitempty"`
	SyncPhase string `json:"syncPhase,omitempty"`
}

type appSummary struct {
	ExternalURLs []string `json:"externalURLs,omitempty"`
	Images       []string `json:"images,omitempty"`
}

// DeepCopyObject copies through JSON: the benchmark's caches never copy.
func (a *application) DeepCopyObject() kruntime.Object {
	out := &application{}
	raw, err := json.Marshal(a)
	if err == nil {
		err = json.Unmarshal(raw, out)
	}
	if err != nil {
		panic(err) // a value that marshalled once
	}
	return out
}

type applicationList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []application `json:"items"`
}

func (l *applicationList) DeepCopyObject() kruntime.Object {
	out := &applicationList{TypeMeta: l.TypeMeta}
	l.ListMeta.DeepCopyInto(&out.ListMeta)
	for i := range l.Items {
		out.Items = append(out.Items, *l.Items[i].DeepCopyObject().(*application))
	}
	return out
}

// applicationScheme is client-go's scheme plus the Application types, as
// an operator's scheme holds its custom resources.
var applicationScheme = func() *kruntime.Scheme {
	s := kruntime.NewScheme()
	if err := scheme.AddToScheme(s); err != nil {
		panic(err)
	}
	gv := applicationKind.GroupVersion()
	s.AddKnownTypeWithName(applicationKind, &application{})
	s.AddKnownTypeWithName(gv.WithKind("ApplicationList"), &applicationList{})
	metav1.AddToGroupVersion(s, gv)
	return s
}()

// realApplication is one Application of the corpus: what argocd-server
// creates, and the status the controller writes after.
type realApplication struct {
	app    *application
	status appStatus
}

// realApplications returns the n Applications of the corpus, in write
// order, the same in every run.
func realApplications(n int) []realApplication {
	out := make([]realApplication, 0, n)
	base := realSecretsEpoch
	for t := range n {
		tp := realTemplateOf(t)
		r := rand.New(rand.NewPCG(uint64(t), 0xa995))
		team := tp.ns
		repo := "https://git.example.com/platform/" + team + "-deploy.git"
		src := appSource{RepoURL: repo, Path: "charts/" + tp.release, TargetRevision: "main", Helm: &appHelm{
			ReleaseName: tp.release, ValueFiles: []string{"values.yaml", "values-prod.yaml"},
			Parameters: []appHelmParam{{Name: "image.tag", Value: tp.version}, {Name: "replicaCount", Value: fmt.Sprint(tp.replicas)},
				{Name: "resources.requests.cpu", Value: tp.chart.cpu}, {Name: "resources.requests.memory", Value: tp.chart.mem}}}}
		dst := appDestination{Server: "https://kubernetes.default.svc", Namespace: team}
		name := team + "-" + tp.release
		a := &application{
			TypeMeta: metav1.TypeMeta{APIVersion: applicationKind.GroupVersion().String(), Kind: applicationKind.Kind},
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: applicationsNS,
				Labels: map[string]string{"app.kubernetes.io/part-of": team, "argocd.argoproj.io/instance": "apps-" + team, "team": team,
					realBatchLabel: strconv.Itoa(t / realBatchSize)},
				Annotations: map[string]string{"argocd.argoproj.io/sync-wave": "1", "notifications.argoproj.io/subscribe.on-sync-failed.slack": team + "-alerts"},
				Finalizers:  []string{"resources-finalizer.argocd.argoproj.io/background"}},
			Spec: appSpec{Project: team, Source: src, Destination: dst, SyncPolicy: &appSyncPolicy{
				Automated:   &appAutomated{Prune: true, SelfHeal: true},
				SyncOptions: []string{"CreateNamespace=true", "ServerSideApply=true", "PruneLast=true"},
				Retry:       &appRetry{Limit: 5, Backoff: &appRetryBackoff{Duration: "5s", Factor: 2, MaxDuration: "3m0s"}}}},
		}
		at := base.Add(time.Duration(t) * time.Minute)
		revs := 3 + r.IntN(6)
		sha := func() string { return randomName(r, "0123456789abcdef", 40) }
		var history []appRevision
		for i := range revs {
			d := metav1.NewTime(at.Add(time.Duration(i) * time.Hour))
			history = append(history, appRevision{Revision: sha(), DeployedAt: d, ID: int64(i), Source: src,
				DeployStartedAt: &d, InitiatedBy: appInitiator{Automated: true}})
		}
		head := history[len(history)-1].Revision
		var resources []appResourceStatus
		var results []appResourceResult
		for _, k := range [][3]string{{"", "v1", "ServiceAccount"}, {"", "v1", "ConfigMap"}, {"", "v1", "Secret"},
			{"", "v1", "Service"}, {"apps", "v1", "Deployment"}, {"autoscaling", "v2", "HorizontalPodAutoscaler"},
			{"policy", "v1", "PodDisruptionBudget"}, {"networking.k8s.io", "v1", "Ingress"}, {"networking.k8s.io", "v1", "NetworkPolicy"},
			{"monitoring.coreos.com", "v1", "ServiceMonitor"}, {"rbac.authorization.k8s.io", "v1", "Role"}, {"rbac.authorization.k8s.io", "v1", "RoleBinding"}} {
			suffixes := []string{""}
			switch k[2] {
			case "ConfigMap":
				suffixes = []string{"-config", "-env"}
			case "Secret":
				suffixes = []string{"-secrets", "-tls"}[:1+t%3/2]
			case "Ingress", "NetworkPolicy", "ServiceMonitor", "HorizontalPodAutoscaler":
				if r.IntN(3) == 0 {
					continue // not every chart has them
				}
			}
			for _, suffix := range suffixes {
				rs := appResourceStatus{Group: k[0], Version: k[1], Kind: k[2], Namespace: team, Name: tp.release + suffix, Status: "Synced"}
				if k[2] == "Deployment" || k[2] == "Service" || k[2] == "Ingress" || k[2] == "HorizontalPodAutoscaler" {
					rs.Health = &appHealth{Status: "Healthy"}
				}
				resources = append(resources, rs)
				results = append(results, appResourceResult{Group: k[0], Version: k[1], Kind: k[2], Namespace: team, Name: rs.Name,
					Status: "Synced", Message: strings.ToLower(k[2]) + "/" + rs.Name + " serverside-applied", HookPhase: "Running", SyncPhase: "Sync"})
			}
		}
		started := metav1.NewTime(at.Add(time.Duration(revs-1) * time.Hour))
		finished := metav1.NewTime(started.Add(time.Duration(2+r.IntN(40)) * time.Second))
		reconciled := metav1.NewTime(finished.Add(time.Duration(r.IntN(180)) * time.Second))
		images := []string{"registry.example.com/" + team + "/" + tp.release + ":" + tp.version}
		if tp.chart.sidecar != "" {
			images = append(images, "registry.example.com/platform/"+tp.chart.sidecar+":2.4.1")
		}
		status := appStatus{
			Resources: resources,
			Sync:      appSyncStatus{Status: "Synced", ComparedTo: appComparedTo{Source: src, Destination: dst}, Revision: head},
			Health:    appHealth{Status: "Healthy"}, History: history, ReconciledAt: &reconciled,
			OperationState: &appOperationState{
				Operation: appOperation{Sync: &appSyncOperation{Revision: head, SyncOptions: a.Spec.SyncPolicy.SyncOptions},
					InitiatedBy: appInitiator{Automated: true}, Retry: appRetry{Limit: 5}},
				Phase: "Succeeded", Message: "successfully synced (all tasks run)",
				SyncResult: &appSyncResult{Resources: results, Revision: head, Source: src},
				StartedAt:  started, FinishedAt: &finished,
			},
			SourceType: "Helm", ControllerNamespace: applicationsNS,
			Summary: appSummary{Images: images, ExternalURLs: []string{"https://" + tp.release + "." + team + ".example.com"}},
		}
		out = append(out, realApplication{app: a, status: status})
	}
	return out
}

// installApplications installs the Application CRD through dyn and
// returns a client of its resource.
func installApplications(ctx context.Context, dyn dynamic.Interface) (dynamic.NamespaceableResourceInterface, error) {
	gvr, err := testapiserver.InstallCRD(ctx, dyn, applicationKind)
	if err != nil {
		return nil, err
	}
	return dyn.Resource(gvr), nil
}

// writeRealApplication creates a's Application as argocd-server does, then
// writes its status as argocd-application-controller does.
func writeRealApplication(ctx context.Context, res dynamic.NamespaceableResourceInterface, a realApplication) error {
	obj, err := kruntime.DefaultUnstructuredConverter.ToUnstructured(a.app)
	if err != nil {
		return err
	}
	delete(obj, "status")
	created, err := res.Namespace(applicationsNS).Create(ctx, &unstructured.Unstructured{Object: obj}, metav1.CreateOptions{FieldManager: "argocd-server"})
	if apierrors.IsAlreadyExists(err) { // written by an earlier run: write it again
		var patch []byte
		if patch, err = json.Marshal(map[string]any{"metadata": map[string]any{"labels": a.app.Labels, "finalizers": a.app.Finalizers}, "spec": a.app.Spec}); err == nil {
			created, err = res.Namespace(applicationsNS).Patch(ctx, a.app.Name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: "argocd-server"})
		}
	}
	if err != nil {
		return fmt.Errorf("creating Application %s: %w", a.app.Name, err)
	}
	patch, err := json.Marshal(map[string]any{"status": a.status})
	if err != nil {
		return err
	}
	if _, err := res.Namespace(applicationsNS).Patch(ctx, created.GetName(), types.MergePatchType, patch,
		metav1.PatchOptions{FieldManager: "argocd-application-controller"}); err != nil {
		return fmt.Errorf("writing the status of Application %s: %w", a.app.Name, err)
	}
	return nil
}
