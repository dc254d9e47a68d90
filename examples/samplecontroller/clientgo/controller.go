// Package controller is a controller in the style of k8s.io/sample-controller,
// written for client-go: a shared informer factory, typed listers, a
// rate-limited work queue and event handlers. examples/samplecontroller/clientgo
// and examples/samplecontroller/listwatch hold the same file; they differ
// only in the import paths of informers, tools/cache and util/workqueue:
// client-go's (k8s.io/client-go/...) in the first, listwatch's
// (github.com/listwatch/listwatch/clientgo/...) in the second.
package controller

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	appslisters "k8s.io/client-go/listers/apps/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	// The packages whose import path changes: listwatch's clientgo/ tree
	// serves them under github.com/listwatch/listwatch/clientgo/.
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
)

const (
	// AppLabel marks the ConfigMaps the controller acts on (value "true").
	AppLabel = "samplecontroller.listwatch.io/app"
	// AvailableAnnotation is where the controller writes the Deployment's
	// available replicas back onto its ConfigMap (the ConfigMap's status).
	AvailableAnnotation = "samplecontroller.listwatch.io/available-replicas"
	// Data keys of an app's ConfigMap (its spec).
	KeyDeployment = "deploymentName"
	KeyReplicas   = "replicas"
	KeyImage      = "image"
)

// Controller keeps, for each ConfigMap labelled AppLabel=true, a Deployment
// named by its data, owned by it, with its replicas and image; and writes
// the Deployment's available replicas back onto the ConfigMap.
type Controller struct {
	client            kubernetes.Interface
	factory           informers.SharedInformerFactory
	configMapsLister  corelisters.ConfigMapLister
	deploymentsLister appslisters.DeploymentLister
	synced            []cache.InformerSynced
	queue             workqueue.TypedRateLimitingInterface[cache.ObjectName]
}

// New builds the controller over a shared informer factory limited to
// namespace.
func New(ctx context.Context, client kubernetes.Interface, namespace string) (*Controller, error) {
	logger := klog.FromContext(ctx)
	factory := informers.NewSharedInformerFactoryWithOptions(client, 30*time.Second, informers.WithNamespace(namespace))
	configMaps := factory.Core().V1().ConfigMaps()
	deployments := factory.Apps().V1().Deployments()
	c := &Controller{
		client:            client,
		factory:           factory,
		configMapsLister:  configMaps.Lister(),
		deploymentsLister: deployments.Lister(),
		synced:            []cache.InformerSynced{configMaps.Informer().HasSynced, deployments.Informer().HasSynced},
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.DefaultTypedControllerRateLimiter[cache.ObjectName](),
			workqueue.TypedRateLimitingQueueConfig[cache.ObjectName]{Name: "apps"}),
	}
	logger.Info("Setting up event handlers")
	if _, err := configMaps.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueueApp,
		UpdateFunc: func(_, obj any) { c.enqueueApp(obj) },
	}); err != nil {
		return nil, err
	}
	// A change of a Deployment an app owns re-syncs the app: its status,
	// or a Deployment edited or deleted by someone else.
	if _, err := deployments.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: c.handleObject,
		UpdateFunc: func(old, obj any) {
			if old.(*appsv1.Deployment).ResourceVersion == obj.(*appsv1.Deployment).ResourceVersion {
				return // a resync: nothing changed
			}
			c.handleObject(obj)
		},
		DeleteFunc: c.handleObject,
	}); err != nil {
		return nil, err
	}
	return c, nil
}

// Factory is the controller's informer factory.
func (c *Controller) Factory() informers.SharedInformerFactory { return c.factory }

// Run starts the informers and workers, and blocks until ctx ends.
func (c *Controller) Run(ctx context.Context, workers int) error {
	defer utilruntime.HandleCrashWithContext(ctx)
	defer c.queue.ShutDown()
	defer c.factory.Shutdown()
	logger := klog.FromContext(ctx)

	c.factory.Start(ctx.Done())
	logger.Info("Waiting for informer caches to sync")
	if ok := cache.WaitForCacheSync(ctx.Done(), c.synced...); !ok {
		return errors.New("failed to wait for caches to sync")
	}
	logger.Info("Starting workers", "count", workers)
	for range workers {
		go wait.UntilWithContext(ctx, c.runWorker, time.Second)
	}
	<-ctx.Done()
	logger.Info("Shutting down workers")
	return nil
}

func (c *Controller) runWorker(ctx context.Context) {
	for c.processNextWorkItem(ctx) {
	}
}

func (c *Controller) processNextWorkItem(ctx context.Context) bool {
	ref, shutdown := c.queue.Get()
	if shutdown {
		return false
	}
	defer c.queue.Done(ref)
	err := c.syncHandler(ctx, ref)
	if err == nil {
		c.queue.Forget(ref)
		return true
	}
	utilruntime.HandleErrorWithContext(ctx, err, "Error syncing; requeuing for later retry", "objectReference", ref)
	c.queue.AddRateLimited(ref)
	return true
}

// syncHandler makes the app's Deployment match its ConfigMap, and writes
// the Deployment's available replicas onto the ConfigMap.
func (c *Controller) syncHandler(ctx context.Context, ref cache.ObjectName) error {
	cm, err := c.configMapsLister.ConfigMaps(ref.Namespace).Get(ref.Name)
	if apierrors.IsNotFound(err) {
		return nil // deleted: its Deployment goes with it (owner reference)
	}
	if err != nil {
		return err
	}
	name := cm.Data[KeyDeployment]
	replicas, err := strconv.Atoi(cm.Data[KeyReplicas])
	if name == "" || err != nil {
		// A spec that cannot work: wait for the next edit.
		utilruntime.HandleErrorWithContext(ctx, nil, "ConfigMap needs deploymentName and a numeric replicas", "configMap", ref)
		return nil
	}

	deployment, err := c.deploymentsLister.Deployments(cm.Namespace).Get(name)
	if apierrors.IsNotFound(err) {
		deployment, err = c.client.AppsV1().Deployments(cm.Namespace).Create(ctx, newDeployment(cm, name, int32(replicas)), metav1.CreateOptions{})
	}
	if err != nil {
		return err
	}
	if !metav1.IsControlledBy(deployment, cm) {
		return fmt.Errorf("deployment %s/%s exists and is not controlled by ConfigMap %s", deployment.Namespace, name, cm.Name)
	}
	if *deployment.Spec.Replicas != int32(replicas) || deployment.Spec.Template.Spec.Containers[0].Image != cm.Data[KeyImage] {
		deployment, err = c.client.AppsV1().Deployments(cm.Namespace).Update(ctx, newDeployment(cm, name, int32(replicas)), metav1.UpdateOptions{})
		if err != nil {
			return err
		}
	}

	available := strconv.Itoa(int(deployment.Status.AvailableReplicas))
	if cm.Annotations[AvailableAnnotation] == available {
		return nil
	}
	// Never modify the cache: write a copy.
	cmCopy := cm.DeepCopy()
	if cmCopy.Annotations == nil {
		cmCopy.Annotations = map[string]string{}
	}
	cmCopy.Annotations[AvailableAnnotation] = available
	_, err = c.client.CoreV1().ConfigMaps(cm.Namespace).Update(ctx, cmCopy, metav1.UpdateOptions{})
	return err
}

// enqueueApp queues a ConfigMap labelled as an app.
func (c *Controller) enqueueApp(obj any) {
	cm, ok := obj.(*corev1.ConfigMap)
	if !ok || cm.Labels[AppLabel] != "true" {
		return
	}
	c.queue.Add(cache.MetaObjectToName(cm))
}

// handleObject queues the app that owns a Deployment; a deletion may come
// as a tombstone.
func (c *Controller) handleObject(obj any) {
	object, ok := obj.(metav1.Object)
	if !ok {
		tombstone, ok := obj.(cache.DeletedFinalStateUnknown)
		if !ok {
			utilruntime.HandleError(fmt.Errorf("error decoding object, invalid type %T", obj))
			return
		}
		if object, ok = tombstone.Obj.(metav1.Object); !ok {
			utilruntime.HandleError(fmt.Errorf("error decoding object tombstone, invalid type %T", tombstone.Obj))
			return
		}
	}
	owner := metav1.GetControllerOf(object)
	if owner == nil || owner.Kind != "ConfigMap" {
		return
	}
	cm, err := c.configMapsLister.ConfigMaps(object.GetNamespace()).Get(owner.Name)
	if err != nil || cm.UID != owner.UID {
		return // not (or no longer) one of ours
	}
	c.enqueueApp(cm)
}

// newDeployment is the Deployment an app's ConfigMap asks for.
func newDeployment(cm *corev1.ConfigMap, name string, replicas int32) *appsv1.Deployment {
	labels := map[string]string{"app": name, "controller": cm.Name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{
			Name:      name,
			Namespace: cm.Namespace,
			OwnerReferences: []metav1.OwnerReference{
				*metav1.NewControllerRef(cm, corev1.SchemeGroupVersion.WithKind("ConfigMap")),
			},
		},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					Containers: []corev1.Container{{Name: "app", Image: cm.Data[KeyImage]}},
				},
			},
		},
	}
}
