package informers_test

import (
	"context"
	"slices"
	"testing"
	"testing/synctest"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sfake "k8s.io/client-go/kubernetes/fake"

	"github.com/listwatch/listwatch/clientgo/informers"
)

// TestGenerateNameOnFakeClientset: client-go's fake clientset does not
// fill in a name from generateName, so an object a controller creates that
// way reaches the factory's informer without a name. client-go keys it
// "namespace/" and caches it; so must the drop-in factory (on a fake
// clientset it lists and watches through the typed client), or a
// controller's unit test waits for the object for ever.
func TestGenerateNameOnFakeClientset(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		cs := k8sfake.NewClientset()
		f := informers.NewSharedInformerFactory(cs, 0)
		roles := f.Rbac().V1().Roles()
		inf := roles.Informer()
		f.Start(ctx.Done())
		defer f.Shutdown()
		defer cancel()
		f.WaitForCacheSync(ctx.Done())
		role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: "default", GenerateName: "r-"}}
		if _, err := cs.RbacV1().Roles("default").Create(ctx, role, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if keys := inf.GetIndexer().ListKeys(); !slices.Equal(keys, []string{"default/"}) {
			t.Fatalf("keys %q, want [default/]", keys)
		}
		got, err := roles.Lister().Roles("default").Get("")
		if err != nil || got.GenerateName != "r-" {
			t.Fatalf("lister: %v, %v", got, err)
		}
	})
}
