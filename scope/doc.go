// Package scope is a list-and-watch source whose scope (a set of
// namespaces, or all, and label and field selectors) changes while its
// informer runs, without a restart: Source.Update lists only what the new
// scope gains and drops what it loses from the cache without a request,
// through the informer's relist from its own cache, the mechanism
// shard.Source's reassignments use (informer.Relist, informer.CachedAt,
// and informer.Leaver for how the objects that leave are told).
//
//	src, _ := scope.NewSource(ctx, scope.SourceOptions{
//		Inner: func(ns string) cache.ListerWatcherWithContext {
//			return reflector.FromClient(clientset.CoreV1().ConfigMaps(ns))
//		},
//		Scope: scope.Scope{Namespaces: []string{"team-a"}},
//	})
//	inf, _ := informer.New(informer.Options[*corev1.ConfigMap]{Source: src})
//	scope.Attach(src, inf)
//	go inf.Run(ctx)
//	...
//	err := src.Update(ctx, scope.Scope{Namespaces: []string{"team-a", "team-b"}}) // lists team-b alone
//
// See docs/operations.md, "Changing scope at run time".
package scope
