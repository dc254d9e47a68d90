package operator

import (
	"context"
	"fmt"
	"maps"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// OwnerField is the field index on ConfigMaps that maps each to the name of
// the Secret that controls it; List with client.MatchingFields{OwnerField:
// name} answers from the index.
const OwnerField = "digest.listwatch.io/owner"

// Counters counts the reconciler's writes; the fields only grow and are
// safe to read at any time.
type Counters struct {
	Reconciles atomic.Int64 // Reconcile calls
	Created    atomic.Int64 // ConfigMaps created
	Updated    atomic.Int64 // ConfigMaps whose data was rewritten
	Deleted    atomic.Int64 // ConfigMaps deleted because their Secret is gone
}

// Reconciler keeps one digest ConfigMap per Secret.
type Reconciler struct {
	// Client reads from the manager's cache and writes to the apiserver.
	Client client.Client
	// Scheme resolves the Secret's kind for owner references.
	Scheme *runtime.Scheme
	// Counters is never nil once the reconciler is built by NewManager.
	Counters *Counters
}

var _ reconcile.Reconciler = (*Reconciler)(nil)

// Reconcile creates, updates or deletes the digest ConfigMap of the Secret
// named by req.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	r.Counters.Reconciles.Add(1)
	logger := klog.FromContext(ctx).WithValues("secret", req.NamespacedName)
	var secret corev1.Secret
	err := r.Client.Get(ctx, req.NamespacedName, &secret)
	if apierrors.IsNotFound(err) {
		return reconcile.Result{}, r.deleteOwned(ctx, req.Namespace, req.Name)
	}
	if err != nil {
		return reconcile.Result{}, err
	}
	if !secret.DeletionTimestamp.IsZero() {
		return reconcile.Result{}, nil
	}
	want := DesiredConfigMap(&secret)
	if err := controllerutil.SetControllerReference(&secret, want, r.Scheme); err != nil {
		return reconcile.Result{}, err
	}
	var have corev1.ConfigMap
	err = r.Client.Get(ctx, client.ObjectKeyFromObject(want), &have)
	switch {
	case apierrors.IsNotFound(err):
		if err := r.Client.Create(ctx, want); err != nil && !apierrors.IsAlreadyExists(err) {
			return reconcile.Result{}, err
		}
		r.Counters.Created.Add(1)
		logger.V(4).Info("created digest")
		return reconcile.Result{}, nil
	case err != nil:
		return reconcile.Result{}, err
	}
	if !metav1.IsControlledBy(&have, &secret) {
		logger.Info("digest ConfigMap exists but is not ours; leaving it", "configmap", have.Name)
		return reconcile.Result{}, nil
	}
	if Matches(&have, &secret) {
		return reconcile.Result{}, nil
	}
	have.Data = want.Data
	if have.Labels == nil {
		have.Labels = map[string]string{}
	}
	maps.Copy(have.Labels, want.Labels)
	if err := r.Client.Update(ctx, &have); err != nil {
		return reconcile.Result{}, err
	}
	r.Counters.Updated.Add(1)
	logger.V(4).Info("updated digest")
	return reconcile.Result{}, nil
}

// deleteOwned deletes the ConfigMaps the field index says the named Secret
// controlled: no garbage collector is assumed to run.
func (r *Reconciler) deleteOwned(ctx context.Context, namespace, secret string) error {
	var owned corev1.ConfigMapList
	if err := r.Client.List(ctx, &owned, client.InNamespace(namespace), client.MatchingFields{OwnerField: secret}); err != nil {
		return fmt.Errorf("listing digests of %s/%s: %w", namespace, secret, err)
	}
	for i := range owned.Items {
		err := r.Client.Delete(ctx, &owned.Items[i], client.Preconditions{UID: &owned.Items[i].UID})
		switch {
		case err == nil:
			r.Counters.Deleted.Add(1)
		case !apierrors.IsNotFound(err):
			return err
		}
	}
	return nil
}

// ownerIndex is the OwnerField index function: the name of the Secret that
// controls a ConfigMap, if any.
func ownerIndex(obj client.Object) []string {
	ref := metav1.GetControllerOf(obj)
	if ref == nil || ref.Kind != "Secret" || ref.APIVersion != "v1" {
		return nil
	}
	return []string{ref.Name}
}
