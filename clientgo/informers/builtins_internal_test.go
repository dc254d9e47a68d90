package informers

import (
	"reflect"
	"testing"

	"k8s.io/client-go/kubernetes"
	k8sfake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	lwcache "github.com/listwatch/listwatch/clientgo/tools/cache"
	builtinpkg "github.com/listwatch/listwatch/restsource/builtin"
)

// Every entry of the generated table, asked for through client-go's typed
// informer (the entry's accessor chain), gets listwatch's informer, keyed
// by the entry's type: client-go's default newFunc is recognised for every
// type, the table's example is the type client-go's informer asks for,
// and restsource takes every type (with a REST client; the fake
// clientset's typed client without). A client-go release that changes any
// of this fails here, as does a type missing from restsource/builtin's
// table (the two tables are generated in one run).
func TestEveryBuiltinIsListwatch(t *testing.T) {
	if n := len(builtinpkg.All()); n != len(builtins) {
		t.Errorf("restsource/builtin has %d types, the factory's table %d", n, len(builtins))
	}
	real, err := kubernetes.NewForConfig(&rest.Config{Host: "http://127.0.0.1:1"}) // never contacted
	if err != nil {
		t.Fatal(err)
	}
	lwType := reflect.TypeOf(lwcache.NewSharedIndexInformer(&cache.ListWatch{}, nil, 0, nil))
	for name, cs := range map[string]kubernetes.Interface{"rest": real, "fake": k8sfake.NewClientset()} {
		f := NewSharedInformerFactory(cs, 0).(*sharedInformerFactory)
		for _, b := range builtins {
			b.informer(f)
			inf := f.informers.All()[reflect.TypeOf(b.typ.Example)]
			if reflect.TypeOf(inf) != lwType {
				t.Errorf("%s clientset: %v: the factory holds %T for %T; want listwatch's informer", name, b.gvr, inf, b.typ.Example)
			}
		}
		if n := len(f.informers.All()); n != len(builtins) {
			t.Errorf("%s clientset: %d informers for %d table entries", name, n, len(builtins))
		}
	}
}
