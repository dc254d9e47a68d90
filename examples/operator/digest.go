package operator

import (
	"crypto/sha256"
	"encoding/hex"
	"maps"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const (
	// DigestSuffix is appended to a Secret's name to name its ConfigMap.
	DigestSuffix = "-digest"
	// DigestOfLabel marks an owned ConfigMap with its Secret's name.
	DigestOfLabel = "digest.listwatch.io/of"
	// TypeKey is the ConfigMap key that holds the Secret's type.
	TypeKey = "secret.type"
	// digestLen is how many hex digits of each SHA-256 the ConfigMap keeps.
	digestLen = 16
)

// DigestName is the name of the ConfigMap that digests the named Secret.
func DigestName(secret string) string { return secret + DigestSuffix }

// Digest is the data the owned ConfigMap of s must hold: for every key of
// the Secret, the first 16 hex digits of the SHA-256 of its value (never
// the value itself), plus the Secret's type under TypeKey (which wins over
// a Secret key of the same name).
func Digest(s *corev1.Secret) map[string]string {
	out := make(map[string]string, len(s.Data)+1)
	for k, v := range s.Data {
		sum := sha256.Sum256(v)
		out[k] = hex.EncodeToString(sum[:])[:digestLen]
	}
	for k, v := range s.StringData {
		// StringData is write-only on a real server; a Secret built in
		// memory may still carry it.
		if _, ok := s.Data[k]; !ok {
			sum := sha256.Sum256([]byte(v))
			out[k] = hex.EncodeToString(sum[:])[:digestLen]
		}
	}
	out[TypeKey] = string(s.Type)
	return out
}

// DesiredConfigMap is the ConfigMap the operator keeps for s, without its
// owner reference (the reconciler adds it).
func DesiredConfigMap(s *corev1.Secret) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: s.Namespace,
			Name:      DigestName(s.Name),
			Labels:    map[string]string{DigestOfLabel: s.Name},
		},
		Data: Digest(s),
	}
}

// Matches reports whether cm holds exactly the digest of s.
func Matches(cm *corev1.ConfigMap, s *corev1.Secret) bool {
	return maps.Equal(cm.Data, Digest(s)) && cm.Labels[DigestOfLabel] == s.Name
}
