package scope_test

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/listwatch/listwatch/fake"
	"github.com/listwatch/listwatch/informer"
	"github.com/listwatch/listwatch/scope"
)

// An operator whose namespaces come from a ConfigMap: a small informer
// watches operator/config, and each change of its "namespaces" key changes
// the scope of the operator's main informer, which goes on running: only
// the namespaces gained are listed, the ones lost leave the cache without
// a request, and its handlers, queues and indexes stay.
func ExampleSource_operator() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv, _ := fake.NewServer(fake.Options{})
	for _, ns := range []string{"team-a", "team-b", "team-c"} {
		for _, name := range []string{"app-1", "app-2"} {
			_, _ = srv.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}})
		}
	}
	config := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "operator", Name: "config"},
		Data: map[string]string{"namespaces": "team-a,team-b"}}
	created, _ := srv.Create(ctx, config)
	config = created.(*corev1.ConfigMap)
	configMaps := func(ns string) cache.ListerWatcherWithContext {
		return srv.ListerWatcher(fake.LWOptions{Resource: fake.ConfigMaps().GVR, Namespace: ns})
	}

	// The operator's configuration: its namespaces, as they change.
	wanted := make(chan []string, 10)
	cfgInf, _ := informer.New(informer.Options[*corev1.ConfigMap]{Source: configMaps("operator")})
	_, _ = cfgInf.AddHandler(informer.HandlerFuncs[*corev1.ConfigMap]{
		AddFunc:    func(cm *corev1.ConfigMap, _ bool) { wanted <- strings.Split(cm.Data["namespaces"], ",") },
		UpdateFunc: func(_, cm *corev1.ConfigMap) { wanted <- strings.Split(cm.Data["namespaces"], ",") },
	}, informer.HandlerOptions{})
	go func() { _ = cfgInf.Run(ctx) }()
	first := <-wanted

	// The operator's informer, over the namespaces configured.
	src, _ := scope.NewSource(ctx, scope.SourceOptions{Inner: configMaps, Scope: scope.Scope{Namespaces: first}})
	inf, _ := informer.New(informer.Options[*corev1.ConfigMap]{Source: src})
	scope.Attach(src, inf)
	go func() { _ = inf.Run(ctx) }()
	_ = inf.WaitForSync(ctx)
	fmt.Printf("watching %v: %d ConfigMaps cached\n", src.Scope().Namespaces, len(inf.Reader().List()))

	// The configuration changes: team-b out, team-c in.
	config.Data["namespaces"] = "team-a,team-c"
	_, _ = srv.Update(ctx, config)
	before := src.Stats()
	if err := src.Update(ctx, scope.Scope{Namespaces: <-wanted}); err != nil {
		fmt.Println(err)
		return
	}
	after := src.Stats()
	fmt.Printf("watching %v: %d ConfigMaps cached, %d listed in %d request\n", src.Scope().Namespaces,
		len(inf.Reader().List()), after.ListedObjects-before.ListedObjects, after.Lists-before.Lists)

	// A namespace name that cannot be is refused, and the scope stays.
	err := src.Update(ctx, scope.Scope{Namespaces: []string{"Team_D"}})
	fmt.Println(err != nil, src.Scope().Namespaces)
	// Output:
	// watching [team-a team-b]: 4 ConfigMaps cached
	// watching [team-a team-c]: 4 ConfigMaps cached, 2 listed in 1 request
	// true [team-a team-c]
}
