package operator_test

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/listwatch/examples/operator"
)

// The ConfigMap the operator keeps for a Secret: value digests, never values.
func ExampleDesiredConfigMap() {
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "db"},
		Type:       corev1.SecretTypeOpaque,
		Data:       map[string][]byte{"password": []byte("hunter2")},
	}
	cm := operator.DesiredConfigMap(s)
	fmt.Println(cm.Namespace+"/"+cm.Name, cm.Labels[operator.DigestOfLabel])
	fmt.Println(cm.Data["password"], cm.Data[operator.TypeKey])
	fmt.Println(operator.Matches(cm, s))
	// Output:
	// demo/db-digest db
	// f52fbd32b2b3b86f Opaque
	// true
}

// Switching informer implementations, as the -informers flag does.
func ExampleInformers() {
	var impl operator.Informers
	fmt.Println(impl.String())
	fmt.Println(impl.Set("client-go"), impl.String())
	fmt.Println(impl.Set("reflector"))
	// Output:
	// listwatch
	// <nil> client-go
	// informers: "reflector" is neither "listwatch" nor "client-go"
}
