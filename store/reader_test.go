package store_test

import (
	"errors"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/listwatch/listwatch/store"
)

// images files a pod under each container image (multi-valued, may repeat).
func images(p *corev1.Pod) ([]string, error) {
	var out []string
	for _, c := range p.Spec.Containers {
		out = append(out, c.Image)
	}
	return out, nil
}

func withImages(p *corev1.Pod, imgs ...string) *corev1.Pod {
	for _, img := range imgs {
		p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Image: img})
	}
	return p
}

func readerFixture(t *testing.T, opts store.Options[*corev1.Pod]) store.Reader[*corev1.Pod] {
	t.Helper()
	opts.Indexers = store.Indexers[*corev1.Pod]{"images": images}
	s, err := store.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []*corev1.Pod{
		withImages(pod("a", "web", "", map[string]string{"app": "web"}), "nginx", "envoy", "nginx"),
		withImages(pod("a", "db", "", map[string]string{"app": "db"}), "postgres"),
		withImages(pod("b", "web", "", map[string]string{"app": "web"}), "nginx"),
		withImages(pod("", "cluster", "", nil)),
	} {
		if err := s.Upsert(p); err != nil {
			t.Fatal(err)
		}
	}
	return s.Reader()
}

func TestReaderQueries(t *testing.T) {
	r := readerFixture(t, store.Options[*corev1.Pod]{})
	web := labels.SelectorFromSet(labels.Set{"app": "web"})
	for _, tc := range []struct {
		name string
		got  func() ([]string, error)
		want []string
	}{
		{"List", func() ([]string, error) { return names(r.List()), nil }, []string{"/cluster", "a/db", "a/web", "b/web"}},
		{"ListBySelector", func() ([]string, error) { return names(r.ListBySelector(web)), nil }, []string{"a/web", "b/web"}},
		{"ListBySelector nothing", func() ([]string, error) { return names(r.ListBySelector(labels.Nothing())), nil }, []string{}},
		{"ByIndex multi-valued", func() ([]string, error) { p, err := r.ByIndex("images", "nginx"); return names(p), err }, []string{"a/web", "b/web"}},
		{"ByIndex missing value", func() ([]string, error) { p, err := r.ByIndex("images", "none"); return names(p), err }, []string{}},
		{"ByIndex namespace", func() ([]string, error) { p, err := r.ByIndex(store.NamespaceIndex, "a"); return names(p), err }, []string{"a/db", "a/web"}},
		{"IndexKeys sorted", func() ([]string, error) { return r.IndexKeys("images", "nginx") }, []string{"a/web", "b/web"}},
		{"ListIndexValues sorted", func() ([]string, error) { return r.ListIndexValues("images") }, []string{"envoy", "nginx", "postgres"}},
		{"ListIndexValues namespace", func() ([]string, error) { return r.ListIndexValues(store.NamespaceIndex) }, []string{"", "a", "b"}},
		{"Index union, each once", func() ([]string, error) {
			p, err := r.Index("images", withImages(pod("x", "probe", "", nil), "postgres", "nginx", "postgres"))
			return names(p), err
		}, []string{"a/db", "a/web", "b/web"}},
		{"Namespace List", func() ([]string, error) { return names(r.Namespace("a").List(nil)), nil }, []string{"a/db", "a/web"}},
		{"Namespace List selector", func() ([]string, error) { return names(r.Namespace("a").List(web)), nil }, []string{"a/web"}},
		{"Namespace all", func() ([]string, error) { return names(r.Namespace("").List(web)), nil }, []string{"a/web", "b/web"}},
		{"Namespace empty", func() ([]string, error) { return names(r.Namespace("zzz").List(nil)), nil }, []string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.got()
			if err != nil || !slices.Equal(got, tc.want) {
				t.Fatalf("got %v, %v; want %v", got, err, tc.want)
			}
		})
	}
}

func TestReaderUnknownIndex(t *testing.T) {
	r := readerFixture(t, store.Options[*corev1.Pod]{})
	_, err1 := r.ByIndex("nope", "x")
	_, err2 := r.IndexKeys("nope", "x")
	_, err3 := r.ListIndexValues("nope")
	_, err4 := r.Index("nope", pod("a", "web", "", nil))
	for i, err := range []error{err1, err2, err3, err4} {
		if !errors.Is(err, store.ErrUnknownIndex) {
			t.Errorf("query %d: %v, want ErrUnknownIndex", i, err)
		}
	}
}

func TestReaderGet(t *testing.T) {
	upper := func(p *corev1.Pod) (string, error) { return "K:" + p.Namespace + ":" + p.Name, nil }
	for _, tc := range []struct {
		name string
		opts store.Options[*corev1.Pod]
		key  string
	}{
		{"default key", store.Options[*corev1.Pod]{}, "a/web"},
		{"custom key scans the namespace", store.Options[*corev1.Pod]{KeyFunc: upper}, "K:a:web"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := readerFixture(t, tc.opts)
			byKey, ok1 := r.GetByKey(tc.key)
			byObj, ok2, err := r.Get(pod("a", "web", "", nil))
			byNS, ok3 := r.Namespace("a").Get("web")
			if !ok1 || !ok2 || !ok3 || err != nil || byKey != byObj || byKey != byNS || byKey.Labels["app"] != "web" {
				t.Fatalf("GetByKey %v %t, Get %v %t %v, Namespace.Get %v %t", byKey, ok1, byObj, ok2, err, byNS, ok3)
			}
			if _, ok := r.Namespace("b").Get("db"); ok {
				t.Fatal("b/db should not exist")
			}
			if p, ok := r.Namespace("").Get("cluster"); !ok || p.Name != "cluster" {
				t.Fatal("cluster-scoped Get through the all-namespaces reader failed")
			}
			var nilPod *corev1.Pod
			if _, _, err := r.Get(nilPod); !errors.Is(err, store.ErrNilObject) {
				t.Fatalf("Get(nil): %v", err)
			}
			if r.Len() != 4 {
				t.Fatalf("Len %d", r.Len())
			}
		})
	}
}
