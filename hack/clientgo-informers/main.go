// Command clientgo-informers writes what listwatch needs to know of each
// built-in type that client-go's shared informer factory has an informer
// for, read from client-go at the version go.mod requires, in two files:
//
//   - restsource/builtin/zz_generated.types.go: the table of types, each
//     with its GroupVersionResource, an example object, whether it is
//     namespaced, and restsource.New instantiated for it (restsource needs
//     the type at compile time);
//
//   - clientgo/informers/zz_generated.builtins.go: the drop-in factory's
//     group accessors (Core(), Apps(), ...: each hands the factory to
//     client-go's generated group constructor, so the typed informers and
//     listers are client-go's own) and its columns of each type, by
//     GroupVersionResource: the typed informer's accessor chain
//     (ForResource), the clientset's REST client of its group version, and
//     the typed client's List/Watch (the fallback for a clientset without
//     a REST client, such as client-go's fake).
//
//     go run ./hack/clientgo-informers         # rewrite the files (make clientgo-gen)
//     go run ./hack/clientgo-informers -check  # exit 1 if one is stale (make lint)
//
// Everything is found by reflection on client-go's interfaces, not by
// reading its source: SharedInformerFactory's methods that return a group's
// Interface, that group's versions, each version's typed informers; a typed
// informer's Lister().List gives the object type, the clientset's method
// named group+version (CoreV1) and its method named like the informer's
// accessor (Pods) give the REST client, the typed client (taking a
// namespace or not) and its list type. The resource is the accessor's name
// in lower case; the generator checks it, and the whole entry, against
// client-go's own factory: ForResource must give the informer the accessor
// chain gives. Anything that does not fit fails the generation.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"go/format"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/cache"
)

// output is the generated file, relative to the module root.
// The two generated files: the table of built-in types with their
// restsource constructors, and the factory's accessors and columns.
const (
	typesOutput   = "restsource/builtin/zz_generated.types.go"
	factoryOutput = "clientgo/informers/zz_generated.builtins.go"
)

const command = "go run ./hack/clientgo-informers (make clientgo-gen)"

func main() {
	check := flag.Bool("check", false, "exit 1 if the generated file is stale instead of writing it")
	flag.Parse()
	files, err := generate()
	if err != nil {
		fmt.Fprintln(os.Stderr, "clientgo-informers:", err)
		os.Exit(2)
	}
	root, err := moduleRoot()
	if err != nil {
		fmt.Fprintln(os.Stderr, "clientgo-informers:", err)
		os.Exit(2)
	}
	stale := false
	for _, output := range []string{typesOutput, factoryOutput} {
		path := filepath.Join(root, output)
		if *check {
			if old, _ := os.ReadFile(path); !bytes.Equal(old, files[output]) {
				fmt.Printf("%s is out of date with client-go; run make clientgo-gen and commit it.\n", output)
				stale = true
			}
			continue
		}
		if err := os.WriteFile(path, files[output], 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "clientgo-informers:", err)
			os.Exit(2)
		}
	}
	if stale {
		os.Exit(1)
	}
}

func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", err
	}
	return filepath.Dir(strings.TrimSpace(string(out))), nil
}

// group is one API group of client-go's factory (Core, Apps, ...).
type group struct {
	accessor string // the factory's method: "Core"
	pkg      string // its package: "k8s.io/client-go/informers/core"
}

// entry is one type client-go's factory has an informer for.
type entry struct {
	gvr        schema.GroupVersionResource
	group      string       // "Core"
	version    string       // "V1"
	accessor   string       // "Pods"
	obj        reflect.Type // corev1.Pod
	list       reflect.Type // corev1.PodList
	namespaced bool
}

// generate inspects client-go and returns the formatted files by path.
func generate() (map[string][]byte, error) {
	factoryType := reflect.TypeFor[informers.SharedInformerFactory]()
	clientsetType := reflect.TypeFor[kubernetes.Interface]()
	// client-go's own factory, to check each entry against: never started.
	upstream := informers.NewSharedInformerFactory(fake.NewClientset(), 0)

	var groups []group
	var entries []entry
	for i := range factoryType.NumMethod() {
		m := factoryType.Method(i)
		if m.Type.NumIn() != 0 || m.Type.NumOut() != 1 {
			continue
		}
		gt := m.Type.Out(0)
		if gt.Kind() != reflect.Interface || gt.Name() != "Interface" || !strings.HasPrefix(gt.PkgPath(), "k8s.io/client-go/informers/") {
			continue
		}
		groups = append(groups, group{accessor: m.Name, pkg: gt.PkgPath()})
		for j := range gt.NumMethod() {
			v := gt.Method(j)
			vt := v.Type.Out(0)
			for k := range vt.NumMethod() {
				e, err := inspect(m.Name, v.Name, vt.Method(k), clientsetType)
				if err != nil {
					return nil, fmt.Errorf("%s().%s().%s(): %w", m.Name, v.Name, vt.Method(k).Name, err)
				}
				if err := verify(upstream, e); err != nil {
					return nil, fmt.Errorf("%s().%s().%s(): %w", m.Name, v.Name, e.accessor, err)
				}
				entries = append(entries, e)
			}
		}
	}
	if len(groups) == 0 || len(entries) == 0 {
		return nil, fmt.Errorf("found no groups or no informers in client-go's SharedInformerFactory")
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].gvr.String() < entries[j].gvr.String() })
	return render(groups, entries)
}

// inspect reads one typed informer accessor (Pods() PodInformer) of
// group g, version v.
func inspect(g, v string, m reflect.Method, clientsetType reflect.Type) (entry, error) {
	e := entry{group: g, version: v, accessor: m.Name}
	informerType := m.Type.Out(0)
	lister, ok := informerType.MethodByName("Lister")
	if !ok {
		return e, fmt.Errorf("%v has no Lister method", informerType)
	}
	list, ok := lister.Type.Out(0).MethodByName("List")
	if !ok || list.Type.NumOut() != 2 || list.Type.Out(0).Kind() != reflect.Slice || list.Type.Out(0).Elem().Kind() != reflect.Pointer {
		return e, fmt.Errorf("%v's List does not return a slice of pointers", lister.Type.Out(0))
	}
	e.obj = list.Type.Out(0).Elem().Elem()
	obj, ok := reflect.New(e.obj).Interface().(runtime.Object)
	if !ok {
		return e, fmt.Errorf("%v is not a runtime.Object", e.obj)
	}
	gvks, _, err := scheme.Scheme.ObjectKinds(obj)
	if err != nil {
		return e, err
	}
	e.gvr = gvks[0].GroupVersion().WithResource(strings.ToLower(m.Name))

	groupClient, ok := clientsetType.MethodByName(g + v)
	if !ok {
		return e, fmt.Errorf("kubernetes.Interface has no %s%s method", g, v)
	}
	typed, ok := groupClient.Type.Out(0).MethodByName(m.Name)
	if !ok {
		return e, fmt.Errorf("%v has no %s method", groupClient.Type.Out(0), m.Name)
	}
	switch {
	case typed.Type.NumIn() == 1 && typed.Type.In(0).Kind() == reflect.String:
		e.namespaced = true
	case typed.Type.NumIn() == 0:
	default:
		return e, fmt.Errorf("%s%s().%s takes neither a namespace nor nothing", g, v, m.Name)
	}
	typedList, ok := typed.Type.Out(0).MethodByName("List")
	if !ok || typedList.Type.Out(0).Kind() != reflect.Pointer {
		return e, fmt.Errorf("%s%s().%s() has no List returning a pointer", g, v, m.Name)
	}
	e.list = typedList.Type.Out(0).Elem()
	if e.obj.PkgPath() != e.list.PkgPath() || e.list.Name() != e.obj.Name()+"List" {
		return e, fmt.Errorf("the typed client lists %v, not %sList", e.list, e.obj.Name())
	}
	return e, nil
}

// verify requires client-go's factory to answer ForResource(e.gvr) with
// the informer the accessor chain gives.
func verify(f informers.SharedInformerFactory, e entry) error {
	gi, err := f.ForResource(e.gvr)
	if err != nil {
		return fmt.Errorf("client-go's ForResource(%v): %w", e.gvr, err)
	}
	chain := reflect.ValueOf(f).MethodByName(e.group).Call(nil)[0].
		MethodByName(e.version).Call(nil)[0].
		MethodByName(e.accessor).Call(nil)[0].
		MethodByName("Informer").Call(nil)[0].Interface().(cache.SharedIndexInformer)
	if gi.Informer().GetIndexer() != chain.GetIndexer() {
		return fmt.Errorf("client-go's ForResource(%v) is not %s().%s().%s()", e.gvr, e.group, e.version, e.accessor)
	}
	return nil
}

// alias is the import name of an API package: k8s.io/api/core/v1 is corev1.
func alias(pkg string) string {
	rest, ok := strings.CutPrefix(pkg, "k8s.io/api/")
	if !ok {
		return strings.NewReplacer("/", "", ".", "", "-", "").Replace(pkg)
	}
	return strings.ReplaceAll(rest, "/", "")
}

// groupAlias is the import name of a group's informer package.
func groupAlias(pkg string) string {
	return filepath.Base(pkg) + "informers"
}

func render(groups []group, entries []entry) (map[string][]byte, error) {
	types, err := renderTypes(entries)
	if err != nil {
		return nil, err
	}
	factory, err := renderFactory(groups, entries)
	if err != nil {
		return nil, err
	}
	return map[string][]byte{typesOutput: types, factoryOutput: factory}, nil
}

// renderTypes writes package builtin's table.
func renderTypes(entries []entry) ([]byte, error) {
	var b bytes.Buffer
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p("// Code generated by %s; DO NOT EDIT.\n\n", command)
	p("//lint:file-ignore SA1019 every type client-go's factory serves, deprecated ones included\n\n")
	p("package builtin\n\n")
	p("import (\n")
	apis := map[string]bool{}
	for _, e := range entries {
		apis[e.obj.PkgPath()] = true
	}
	imports := []string{`"k8s.io/apimachinery/pkg/runtime/schema"`}
	for pkg := range apis {
		imports = append(imports, fmt.Sprintf("%s %q", alias(pkg), pkg))
	}
	sort.Strings(imports)
	for _, im := range imports {
		p("\t%s\n", im)
	}
	p(")\n\n")
	p("// types are the types client-go's factory has an informer for.\n")
	p("var types = []Type{\n")
	for _, e := range entries {
		obj := alias(e.obj.PkgPath()) + "." + e.obj.Name()
		p("\t{GVR: schema.GroupVersionResource{Group: %q, Version: %q, Resource: %q}, Example: &%s{}, Namespaced: %v, New: newSource[*%s]},\n",
			e.gvr.Group, e.gvr.Version, e.gvr.Resource, obj, e.namespaced, obj)
	}
	p("}\n")
	return formatted(b.Bytes())
}

// renderFactory writes the factory's group accessors and its columns of
// each type.
func renderFactory(groups []group, entries []entry) ([]byte, error) {
	var b bytes.Buffer
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p("// Code generated by %s; DO NOT EDIT.\n\n", command)
	p("//lint:file-ignore SA1019 every type client-go's factory serves, deprecated ones included\n\n")
	p("package informers\n\n")
	p("import (\n")
	apis := map[string]bool{}
	for _, e := range entries {
		apis[e.list.PkgPath()] = true
	}
	var imports []string
	for pkg := range apis {
		imports = append(imports, fmt.Sprintf("%s %q", alias(pkg), pkg))
	}
	for _, g := range groups {
		imports = append(imports, fmt.Sprintf("%s %q", groupAlias(g.pkg), g.pkg))
	}
	imports = append(imports,
		`"k8s.io/apimachinery/pkg/runtime/schema"`,
		`"k8s.io/client-go/kubernetes"`,
		`"k8s.io/client-go/rest"`,
		`"k8s.io/client-go/tools/cache"`,
		`"github.com/listwatch/listwatch/reflector"`,
	)
	sort.Strings(imports)
	for _, im := range imports {
		p("\t%s\n", im)
	}
	p(")\n\n")

	for _, g := range groups {
		p("// %s returns client-go's informers of the group, on this factory.\n", g.accessor)
		p("func (f *sharedInformerFactory) %s() %s.Interface {\n", g.accessor, groupAlias(g.pkg))
		p("\treturn %s.New(f, f.namespace, f.tweakListOptions)\n}\n\n", groupAlias(g.pkg))
	}

	p("// builtins are the factory's columns of the types client-go's factory has\n")
	p("// an informer for (restsource/builtin has the others, by gvr).\n")
	p("var builtins = []builtin{\n")
	for _, e := range entries {
		list := alias(e.list.PkgPath()) + "." + e.list.Name()
		client := fmt.Sprintf("c.%s%s().%s(namespace)", e.group, e.version, e.accessor)
		ns := "namespace"
		if !e.namespaced {
			client = fmt.Sprintf("c.%s%s().%s()", e.group, e.version, e.accessor)
			ns = "_"
		}
		p("\t{\n")
		p("\t\tgvr: schema.GroupVersionResource{Group: %q, Version: %q, Resource: %q},\n", e.gvr.Group, e.gvr.Version, e.gvr.Resource)
		p("\t\tinformer: func(f *sharedInformerFactory) cache.SharedIndexInformer { return f.%s().%s().%s().Informer() },\n", e.group, e.version, e.accessor)
		p("\t\trestClient: func(c kubernetes.Interface) rest.Interface { return c.%s%s().RESTClient() },\n", e.group, e.version)
		p("\t\tclientset: func(c kubernetes.Interface, %s string) cache.ListerWatcherWithContext {\n", ns)
		p("\t\t\treturn reflector.FromClient[*%s](%s)\n\t\t},\n", list, client)
		p("\t},\n")
	}
	p("}\n")
	return formatted(b.Bytes())
}

// formatted is src gofmt'ed.
func formatted(src []byte) ([]byte, error) {
	out, err := format.Source(src)
	if err != nil {
		return nil, fmt.Errorf("formatting: %w\n%s", err, src)
	}
	return out, nil
}
