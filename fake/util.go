package fake

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GVR is short for schema.GroupVersionResource.
type GVR = schema.GroupVersionResource
