package ondemand_test

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"

	"github.com/listwatch/listwatch/fake"
	"github.com/listwatch/listwatch/fake/fakeapi"
	"github.com/listwatch/listwatch/informer"
	"github.com/listwatch/listwatch/informer/factory"
	"github.com/listwatch/listwatch/ondemand"
)

// Every Secret's metadata cached, the one a reconcile reads held whole
// from its first read on.
func Example() {
	ctx, cancel := context.WithCancel(context.Background()) //lint:allow-background an Example has no test context
	defer cancel()
	srv, _ := fake.NewServer(fake.Options{Resources: []fake.Resource{secrets}})
	for _, name := range []string{"release-v1", "release-v2", "app-tls"} {
		_, _ = srv.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name},
			Data: map[string][]byte{"key": []byte(name + " data")}})
	}
	cfg, _ := fakeapi.Serve(ctx, srv, fakeapi.Options{})
	cs := kubernetes.NewForConfigOrDie(cfg)

	f := factory.New(factory.Options{})
	meta, _ := factory.Metadata(f, metadata.NewForConfigOrDie(cfg), corev1.SchemeGroupVersion.WithResource("secrets"),
		factory.Selection{}, informer.Options[*metav1.PartialObjectMetadata]{})
	secrets, err := ondemand.New(ctx, ondemand.Options[*corev1.Secret]{
		Resource: corev1.Resource("secrets"),
		Metadata: ondemand.MetadataOf(meta),
		Fetcher: ondemand.FromClient(func(ns string) ondemand.Client[*corev1.Secret, *corev1.SecretList] {
			return cs.CoreV1().Secrets(ns)
		}),
		Budget: 1 << 20,
	})
	if err != nil {
		panic(err)
	}
	f.Start(ctx)
	defer f.Shutdown()
	go func() { _ = secrets.Run(ctx) }()
	if err := f.WaitForCacheSync(ctx); err != nil {
		panic(err)
	}

	for range 3 { // three reconciles
		s, err := secrets.Get(ctx, "shop", "app-tls")
		if err != nil {
			panic(err)
		}
		_ = s.Data
	}
	st := secrets.Stats()
	fmt.Printf("metadata of %d Secrets; %d held whole; %d reads, %d fetch\n", st.Objects, st.Held, st.Reads, st.Fetches)
	// Output:
	// metadata of 3 Secrets; 1 held whole; 3 reads, 1 fetch
}
