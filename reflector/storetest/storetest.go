// Package storetest checks that an implementation of [reflector.Store]
// (and, if it has them, [reflector.PagedStore] and
// [reflector.ResourceVersionUpdater]) keeps the contract the reflector
// relies on, in the manner of testing/fstest: every implementation runs
// the same suite.
//
// # Usage
//
//	func TestMyStoreConforms(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) storetest.Subject {
//			s := newMyStore()
//			return storetest.Subject{Store: s, Contents: s.versionsByKey}
//		})
//	}
//
// # Concurrency
//
// The suite calls the store from one goroutine at a time, as a reflector
// does. Subject.Contents may wait for work in flight (a queue's consumer)
// before it answers.
//
// # Testing
//
// Run drives seeded random sequences of writes, whole lists, paged lists
// (including lists abandoned half-way, when the store is a PagedStore) and
// bookmarks, and after every step compares what the store holds with a
// naive reference model. The objects are ConfigMaps in namespace "ns".
package storetest

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/listwatch/reflector"
)

// Subject is one store under test.
type Subject struct {
	// Store is the implementation.
	Store reflector.Store[*corev1.ConfigMap]
	// Contents returns what the store holds, as resource version by key
	// ("ns/name"), once everything written to it has been applied.
	Contents func() map[string]string
}

// Run checks the subjects that newSubject builds, one per seed.
func Run(t *testing.T, newSubject func(t *testing.T) Subject) {
	seeds := 20
	if testing.Short() {
		seeds = 5
	}
	for seed := range uint64(seeds) {
		t.Run("seed="+strconv.FormatUint(seed, 10), func(t *testing.T) {
			s := newSubject(t)
			c := &checker{t: t, s: s, rng: rand.New(rand.NewPCG(seed, 3)), want: map[string]string{}}
			c.paged, _ = s.Store.(reflector.PagedStore[*corev1.ConfigMap])
			for step := range 150 {
				what := c.step()
				if got := s.Contents(); !maps.Equal(got, c.want) {
					t.Fatalf("step %d (%s): store holds\n%v\nwant\n%v", step, what, sorted(got), sorted(c.want))
				}
			}
		})
	}
}

// checker drives one subject and keeps the reference model.
type checker struct {
	t     *testing.T
	s     Subject
	paged reflector.PagedStore[*corev1.ConfigMap]
	rng   *rand.Rand
	rv    int
	// want is the reference: resource version by key.
	want map[string]string
	// unseen, while a paged list is open, holds the keys the store held
	// when it began that neither a page nor a write has mentioned since.
	unseen map[string]bool
}

func (c *checker) obj(name string) *corev1.ConfigMap {
	c.rv++
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, ResourceVersion: strconv.Itoa(c.rv)}}
}

func (c *checker) name() string { return "o" + strconv.Itoa(c.rng.IntN(12)) }

func (c *checker) must(what string, err error) string {
	c.t.Helper()
	if err != nil {
		c.t.Fatalf("%s: %v", what, err)
	}
	return what
}

// step makes one random call and updates the reference.
func (c *checker) step() string {
	switch n := c.rng.IntN(100); {
	case n < 30:
		o := c.obj(c.name())
		c.write(o, false)
		if n < 15 {
			return c.must("add "+o.Name, c.s.Store.Add(o))
		}
		return c.must("update "+o.Name, c.s.Store.Update(o))
	case n < 45:
		name := c.name()
		o := c.obj(name)
		if rv, ok := c.want["ns/"+name]; ok {
			o.ResourceVersion = rv // the last state, as a DELETED event carries it
		}
		c.write(o, true)
		return c.must("delete "+name, c.s.Store.Delete(o))
	case n < 55:
		return c.replace()
	case n < 60:
		rv := strconv.Itoa(c.rv)
		reflector.UpdateResourceVersion(c.s.Store, rv)
		return "bookmark " + rv
	}
	if c.paged == nil {
		return c.replace()
	}
	return c.page()
}

// write applies an object write to the reference.
func (c *checker) write(o *corev1.ConfigMap, del bool) {
	key := "ns/" + o.Name
	delete(c.unseen, key)
	if del {
		delete(c.want, key)
		return
	}
	c.want[key] = o.ResourceVersion
}

// list makes a random new list: some of the names, each at a new version.
func (c *checker) list() []*corev1.ConfigMap {
	var items []*corev1.ConfigMap
	for i := range 12 {
		if c.rng.IntN(3) > 0 {
			items = append(items, c.obj("o"+strconv.Itoa(i)))
		}
	}
	return items
}

func (c *checker) replace() string {
	items := c.list()
	c.unseen = nil // a whole list supersedes one in pages
	c.want = map[string]string{}
	for _, o := range items {
		c.want["ns/"+o.Name] = o.ResourceVersion
	}
	return c.must(fmt.Sprintf("replace %d items", len(items)), c.s.Store.Replace(items, strconv.Itoa(c.rv)))
}

// page sends a list in pages: ends it, or leaves it open (a list that
// fails half-way) for a later first page to abandon.
func (c *checker) page() string {
	items := c.list()
	first := c.unseen == nil || c.rng.IntN(4) == 0
	if first {
		c.unseen = map[string]bool{}
		for k := range c.want {
			c.unseen[k] = true
		}
	}
	for _, o := range items {
		c.write(o, false)
	}
	what := c.must(fmt.Sprintf("page first=%v %d items", first, len(items)), c.paged.ReplacePage(items, first))
	if c.rng.IntN(3) == 0 {
		return what + " (left open)"
	}
	for k := range c.unseen {
		delete(c.want, k)
	}
	c.unseen = nil
	return c.must(what+", end", c.paged.ReplaceEnd(strconv.Itoa(c.rv)))
}

func sorted(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k, v := range m {
		out = append(out, k+"@"+v)
	}
	slices.Sort(out)
	return out
}
