package reflector

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/internal/apifailure"
)

// Test helpers shared by the scenario, shell and convergence tests.

// bookmark returns a bookmark object; end marks the end of initial events.
func bookmark(rv string, end bool) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{ResourceVersion: rv}}
	if end {
		p.Annotations = map[string]string{metav1.InitialEventsAnnotationKey: "true"}
	}
	return p
}

// errorFor builds the error a server or transport would return for a short
// name used in scenarios: a failure of the shared decision table
// (internal/apifailure: an HTTP code, "gone", "too-large", "refused",
// "reset", ...) or "decode", the reflector's own verdict on a response it
// cannot read. retryAfter applies to 429 and timeouts.
func errorFor(name string, retryAfter int) error {
	if f, ok := apifailure.Lookup(name); ok {
		return f.Err(retryAfter)
	}
	if name == "decode" {
		return decodeError{errors.New("list has no metadata")}
	}
	return fmt.Errorf("unknown error %q", name)
}

// errorObject is the object of an ERROR watch event for err.
func errorObject(err error) runtime.Object {
	var s apierrors.APIStatus
	if errors.As(err, &s) {
		st := s.Status()
		return &st
	}
	return &metav1.Status{Status: metav1.StatusFailure, Message: err.Error()}
}

// recorder is a Metrics that counts everything, safe for concurrent use.
type recorder struct {
	mu     sync.Mutex
	counts map[string]int
	rv     string
}

func newRecorder() *recorder { return &recorder{counts: map[string]int{}} }

func (r *recorder) inc(k string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.counts[k]++
}

func (r *recorder) List()                   { r.inc("lists") }
func (r *recorder) Watch()                  { r.inc("watches") }
func (r *recorder) Relist(c Reason)         { r.inc("relist:" + c.String()) }
func (r *recorder) Event(t watch.EventType) { r.inc("event:" + string(t)) }
func (r *recorder) Error(c Reason)          { r.inc("error:" + c.String()) }
func (r *recorder) ResourceVersion(rv string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rv = rv
}

func (r *recorder) String() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(r.counts)) {
		fmt.Fprintf(&b, "%s=%d\n", k, r.counts[k])
	}
	fmt.Fprintf(&b, "last-rv=%s\n", r.rv)
	return b.String()
}
