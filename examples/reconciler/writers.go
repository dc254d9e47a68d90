package reconciler

import (
	"context"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/listwatch/listwatch/fake"
)

// ClientsetWriter writes through a real clientset.
type ClientsetWriter struct{ Client kubernetes.Interface }

func (w ClientsetWriter) Create(ctx context.Context, cm *corev1.ConfigMap) error {
	_, err := w.Client.CoreV1().ConfigMaps(cm.Namespace).Create(ctx, cm, metav1.CreateOptions{})
	return err
}

func (w ClientsetWriter) Update(ctx context.Context, cm *corev1.ConfigMap) error {
	_, err := w.Client.CoreV1().ConfigMaps(cm.Namespace).Update(ctx, cm, metav1.UpdateOptions{})
	return err
}

func (w ClientsetWriter) Delete(ctx context.Context, namespace, name string) error {
	return w.Client.CoreV1().ConfigMaps(namespace).Delete(ctx, name, metav1.DeleteOptions{})
}

// FakeWriter writes to a fake.Server, failing every FailEvery-th write with
// a 500 so that retries are exercised (0: never).
type FakeWriter struct {
	Server    *fake.Server
	FailEvery int64
	n         atomic.Int64
}

func (w *FakeWriter) fail() error {
	if w.FailEvery > 0 && w.n.Add(1)%w.FailEvery == 0 {
		return apierrors.NewInternalError(errInjected)
	}
	return nil
}

func (w *FakeWriter) Create(ctx context.Context, cm *corev1.ConfigMap) error {
	if err := w.fail(); err != nil {
		return err
	}
	_, err := w.Server.Create(ctx, cm)
	return err
}

func (w *FakeWriter) Update(ctx context.Context, cm *corev1.ConfigMap) error {
	if err := w.fail(); err != nil {
		return err
	}
	_, err := w.Server.Update(ctx, cm)
	return err
}

func (w *FakeWriter) Delete(ctx context.Context, namespace, name string) error {
	if err := w.fail(); err != nil {
		return err
	}
	obj, err := w.Server.Get(ctx, fake.ConfigMaps().GVR, namespace, name)
	if err != nil {
		return err
	}
	_, err = w.Server.Delete(ctx, obj)
	return err
}

type injected struct{}

func (injected) Error() string { return "injected write failure" }

var errInjected = injected{}
