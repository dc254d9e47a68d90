package testapiserver

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

// watchCacheMetric is exported by the apiserver once it has built a watch
// cache for configmaps; it is absent with --watch-cache=false.
const watchCacheMetric = `apiserver_watch_cache_initializations_total{group="",resource="configmaps"}`

// metrics returns the apiserver's /metrics text.
func metrics(t *testing.T, client kubernetes.Interface) string {
	t.Helper()
	body, err := client.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return string(body)
}

func TestOptionsDefaultHasWatchCacheAndWatchList(t *testing.T) {
	srv := startServer(t, Options{})
	admin := kubernetes.NewForConfigOrDie(srv.AdminConfig())
	// The watch caches fill asynchronously after start-up, so allow a
	// bounded wait for the configmaps one.
	err := wait.PollUntilContextTimeout(t.Context(), 200*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		return strings.Contains(metrics(t, admin), watchCacheMetric), nil
	})
	if err != nil {
		t.Errorf("default server never exported the configmaps watch cache metric %s: %v", watchCacheMetric, err)
	}
	ns := newNamespace(t, admin)
	w, err := admin.CoreV1().ConfigMaps(ns).Watch(t.Context(), watchListOptions())
	if err != nil {
		t.Fatalf("watch-list request on a default server: %v", err)
	}
	defer w.Stop()
	ev := <-w.ResultChan()
	if ev.Type != watch.Bookmark {
		t.Fatalf("first event in an empty namespace = %s, want BOOKMARK", ev.Type)
	}
	if got := ev.Object.(*corev1.ConfigMap).Annotations[metav1.InitialEventsAnnotationKey]; got != "true" {
		t.Errorf("bookmark annotation %s = %q, want true", metav1.InitialEventsAnnotationKey, got)
	}
}

func TestOptionsWatchCacheOffWatchListOffCompaction(t *testing.T) {
	srv := startServer(t, Options{
		DisableWatchCache:      true,
		WatchList:              FeatureDisabled,
		EtcdCompactionInterval: time.Second,
	})
	admin := kubernetes.NewForConfigOrDie(srv.AdminConfig())
	if strings.Contains(metrics(t, admin), watchCacheMetric) {
		t.Errorf("server with --watch-cache=false exports %s", watchCacheMetric)
	}
	ns := newNamespace(t, admin)
	_, err := admin.CoreV1().ConfigMaps(ns).Watch(t.Context(), watchListOptions())
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "WatchList feature gate") {
		t.Errorf("watch-list request with WatchList=false = %v, want 422 naming the gate", err)
	}

	cm, err := admin.CoreV1().ConfigMaps(ns).Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	oldRV := cm.ResourceVersion
	for i := range 3 {
		cm.Data = map[string]string{"i": string(rune('0' + i))}
		if cm, err = admin.CoreV1().ConfigMaps(ns).Update(t.Context(), cm, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// With a one-second compaction interval the creation revision is
	// compacted within a few seconds; a watch from it must then fail 410.
	err = wait.PollUntilContextTimeout(t.Context(), 500*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		return watchFromIsGone(ctx, admin, ns, oldRV), nil
	})
	if err != nil {
		t.Errorf("resourceVersion %s never became too old with a 1s compaction interval: %v", oldRV, err)
	}
}

// watchListOptions asks for a streaming list: initial events, then a
// bookmark marking their end.
func watchListOptions() metav1.ListOptions {
	return metav1.ListOptions{
		AllowWatchBookmarks:  true,
		SendInitialEvents:    ptr.To(true),
		ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan,
	}
}

// watchFromIsGone reports whether a watch from rv is refused as expired,
// either when it is opened or as its first event.
func watchFromIsGone(ctx context.Context, client kubernetes.Interface, ns, rv string) bool {
	w, err := client.CoreV1().ConfigMaps(ns).Watch(ctx, metav1.ListOptions{ResourceVersion: rv})
	if err != nil {
		return apierrors.IsGone(err) || apierrors.IsResourceExpired(err)
	}
	defer w.Stop()
	ev := <-w.ResultChan()
	if ev.Type != watch.Error {
		return false
	}
	status := apierrors.FromObject(ev.Object)
	return apierrors.IsGone(status) || apierrors.IsResourceExpired(status)
}
