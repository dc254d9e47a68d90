package fakeapi_test

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/listwatch/listwatch/fake"
	"github.com/listwatch/listwatch/fake/fakeapi"
)

// A controller's clientset against the in-memory apiserver: writes as
// kube-apiserver does them, and an injected fault as the client sees it.
func Example() {
	ctx, cancel := context.WithCancel(context.Background()) //lint:allow-background an Example has no test context
	defer cancel()                                          // stops the server
	srv, err := fake.NewServer(fake.Options{})              // pods and configmaps
	if err != nil {
		panic(err)
	}
	cfg, err := fakeapi.Serve(ctx, srv, fakeapi.Options{})
	if err != nil {
		panic(err)
	}
	cms := kubernetes.NewForConfigOrDie(cfg).CoreV1().ConfigMaps("default")

	cm, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: "settings-"}}, metav1.CreateOptions{})
	if err != nil {
		panic(err)
	}
	fmt.Println("created", cm.Name, "uid", cm.UID, "at RV", cm.ResourceVersion)

	cm, err = cms.Patch(ctx, cm.Name, types.StrategicMergePatchType, []byte(`{"data":{"mode":"fast"}}`), metav1.PatchOptions{})
	if err != nil {
		panic(err)
	}
	fmt.Println("patched", cm.Data, "at RV", cm.ResourceVersion)

	stale := cm.DeepCopy()
	stale.ResourceVersion = "1"
	_, err = cms.Update(ctx, stale, metav1.UpdateOptions{})
	fmt.Println("stale update is a conflict:", apierrors.IsConflict(err))

	_ = srv.FailNext(fake.Failure{Times: 1, Kind: fake.Forbidden, Verbs: fake.VerbList})
	_, err = cms.List(ctx, metav1.ListOptions{})
	fmt.Println("injected fault:", err)

	list, _ := cms.List(ctx, metav1.ListOptions{})
	fmt.Println("listed", len(list.Items), "at RV", list.ResourceVersion)
	// Output:
	// created settings-00001 uid 00000000-0000-0000-0000-000000000002 at RV 1
	// patched map[mode:fast] at RV 2
	// stale update is a conflict: true
	// injected fault: configmaps is forbidden: User "system:serviceaccount:default:fake" cannot list resource "configmaps" in API group "" in the namespace "default"
	// listed 1 at RV 2
}
