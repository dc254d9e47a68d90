package operator

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestDigest(t *testing.T) {
	s := &corev1.Secret{Type: corev1.SecretTypeOpaque, Data: map[string][]byte{"a": []byte("x"), TypeKey: []byte("y")}}
	s.StringData = map[string]string{"a": "ignored", "b": "x"}
	d := Digest(s)
	if len(d) != 3 || d["a"] != d["b"] || len(d["a"]) != digestLen || d[TypeKey] != "Opaque" {
		t.Fatalf("Digest = %v", d)
	}
	s.Data["a"] = []byte("z")
	if Digest(s)["a"] == d["a"] {
		t.Fatal("digest did not change with the value")
	}
}

func TestInformersSet(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Informers
		ok   bool
	}{{"listwatch", Listwatch, true}, {"client-go", ClientGo, true}, {"", "", false}, {"clientgo", "", false}} {
		var i Informers
		err := i.Set(tc.in)
		if (err == nil) != tc.ok || i != tc.want {
			t.Errorf("Set(%q) = %v, %q", tc.in, err, i)
		}
	}
	if _, err := Informers("x").NewInformer(); err == nil {
		t.Error("NewInformer accepted an unknown name")
	}
}
