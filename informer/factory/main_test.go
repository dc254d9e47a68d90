package factory

import (
	"testing"

	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"

	"github.com/listwatch/listwatch/fake"
	"github.com/listwatch/listwatch/informer/informertest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var cmGVR = fake.ConfigMaps().GVR

// cmEvents records typed ConfigMap notifications as strings.
type cmEvents = informertest.Recorder[*corev1.ConfigMap]
