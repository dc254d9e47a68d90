package objects

import "k8s.io/client-go/tools/cache"

// NoWatchList returns lw declaring that it cannot serve streaming lists
// (IsWatchListSemanticsUnSupported), so that client-go's reflector, and
// listwatch's drop-ins that honour the declaration, list page by page
// although the WatchListClient feature is on by default. The result keeps
// lw's context methods (ListWithContext, WatchWithContext) where lw has
// them, so that a reflector calls the same methods of lw as it would
// without the wrapper.
func NoWatchList(lw cache.ListerWatcher) cache.ListerWatcher {
	if ctx, ok := lw.(cache.ListerWatcherWithContext); ok {
		return noWatchListWithContext{lw, ctx}
	}
	return noWatchList{lw}
}

type noWatchList struct{ cache.ListerWatcher }

func (noWatchList) IsWatchListSemanticsUnSupported() bool { return true }

type noWatchListWithContext struct {
	cache.ListerWatcher
	cache.ListerWatcherWithContext
}

func (noWatchListWithContext) IsWatchListSemanticsUnSupported() bool { return true }
