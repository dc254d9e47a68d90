package fake_test

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/listwatch/fake"
)

func Example() {
	ctx := context.Background()
	srv, err := fake.NewServer(fake.Options{}) // serves pods and configmaps
	if err != nil {
		panic(err)
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", Labels: map[string]string{"app": "web"}}}
	if _, err := srv.Create(ctx, pod); err != nil {
		panic(err)
	}

	lw := srv.ListerWatcher(fake.LWOptions{Resource: fake.Pods().GVR, Namespace: "ns"})
	list, _ := lw.ListWithContext(ctx, metav1.ListOptions{LabelSelector: "app=web"})
	pods := list.(*corev1.PodList)
	fmt.Println("listed", len(pods.Items), "pod(s) at RV", pods.ResourceVersion)

	w, _ := lw.WatchWithContext(ctx, metav1.ListOptions{ResourceVersion: pods.ResourceVersion, LabelSelector: "app=web"})
	defer w.Stop()
	moved := pods.Items[0].DeepCopy()
	moved.Labels["app"] = "db" // leaves the selector
	if _, err := srv.Update(ctx, moved); err != nil {
		panic(err)
	}
	ev := <-w.ResultChan()
	fmt.Println(ev.Type, ev.Object.(*corev1.Pod).Name, ev.Object.(*corev1.Pod).ResourceVersion)

	_ = srv.FailNext(fake.Failure{Times: 1, Kind: fake.TooManyRequests, RetryAfterSeconds: 2})
	_, err = lw.ListWithContext(ctx, metav1.ListOptions{})
	fmt.Println(err)
	// Output:
	// listed 1 pod(s) at RV 1
	// DELETED web 2
	// Too many requests, please try again later.
}

// ExampleConverged shows the churn generator and the convergence check, here
// against a hand-written "store" that copies the server's list.
func ExampleConverged() {
	ctx := context.Background()
	srv, _ := fake.NewServer(fake.Options{})
	churn, _ := fake.NewChurn(srv, fake.ChurnOptions{Resource: fake.Pods().GVR, Namespaces: []string{"a", "b"}, Seed: 1})
	_ = churn.Steps(ctx, 100)

	lwo := fake.LWOptions{Resource: fake.Pods().GVR}
	list, _ := srv.ListerWatcher(lwo).ListWithContext(ctx, metav1.ListOptions{})
	items := list.(*corev1.PodList).Items
	store := make([]*corev1.Pod, len(items))
	for i := range items {
		store[i] = &items[i]
	}
	fmt.Println(fake.Converged(srv, lwo, store))

	_, _ = srv.Delete(ctx, store[0])
	fmt.Println(fake.Converged(srv, lwo, store) != nil)
	// Output:
	// <nil>
	// true
}

// ExampleOptions_fidelity turns on the options that make writes behave like
// a real cluster's: namespaces must exist, and writes record managedFields.
func ExampleOptions_fidelity() {
	ctx := context.Background()
	srv, _ := fake.NewServer(fake.Options{RequireNamespaces: true, FieldManager: "my-controller"})
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "cfg"}, Data: map[string]string{"k": "v"}}
	_, err := srv.Create(ctx, cm)
	fmt.Println(err)

	_ = srv.CreateNamespace(ctx, "team")
	out, _ := srv.Create(ctx, cm)
	mf := out.(*corev1.ConfigMap).ManagedFields[0]
	fmt.Println(mf.Manager, mf.Operation, mf.FieldsV1.GetRawString())

	bad := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "Not_Valid"}}
	_, err = srv.Create(ctx, bad)
	fmt.Println(apierrors.IsInvalid(err))
	// Output:
	// namespaces "team" not found
	// my-controller Update {"f:data":{".":{},"f:k":{}}}
	// true
}
