package bench

import (
	"context"
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/client-go/kubernetes"
)

// The real-server benchmark's third kind (issue 37): Secrets, as the
// namespaces of realTemplateOf's releases hold them, each written by the
// manager that writes it in a cluster:
//
//   - regcred, per namespace: the image-pull secret
//     (kubernetes.io/dockerconfigjson), the same bytes in every namespace,
//     copied there by a replicator (field manager kubernetes-replicator,
//     with its annotations);
//   - sh.helm.release.v1.<release>.v<rev>, per release, revisions 1 to 2 or
//     3 (helm.sh/release.v1; labels name, owner=helm, status, version,
//     createdAt): data.release is Helm's base64 of the gzipped release
//     JSON (real_helm_release_test.go), unique per release and revision;
//   - <release>-tls, for every third release: cert-manager's certificate
//     (kubernetes.io/tls, server-side applied by
//     cert-manager-certificates-issuing with its annotations): tls.crt and
//     tls.key unique, ca.crt the issuer's CA, the same everywhere;
//   - <release>-secrets, per release: an Opaque app secret written by Helm
//     and then applied by a GitOps controller (as the ConfigMaps are): a
//     few unique passwords and keys beside values that repeat ("true",
//     "5432", "postgres", the database host pattern).
//
// Everything is seeded by the release (as realConfigOf), so the corpus is
// the same in every run.

// realSecretsEpoch is when the corpus pretends to have been written
// (Helm's createdAt and release timestamps; fixed, so the bytes are).
var realSecretsEpoch = time.Date(2026, 10, 1, 8, 0, 0, 0, time.UTC)

// realSecret is one Secret of the corpus and how it is written.
type realSecret struct {
	s       *corev1.Secret
	manager string // the field manager that creates or applies it
	apply   bool   // written by server-side apply (cert-manager) rather than created
	gitops  bool   // then a GitOps controller applies a label and an annotation
}

// realSecrets returns the n Secrets of the corpus, in write order. It
// gzips every Helm release, so it takes a few seconds for 20,000.
func realSecrets(n int) []realSecret {
	out := make([]realSecret, 0, n)
	for t := 0; len(out) < n; t++ {
		tp := realTemplateOf(t)
		at := realSecretsEpoch.Add(time.Duration(t) * time.Minute)
		if t%realTemplatesPerNS == 0 {
			out = append(out, realSecret{s: realRegcredOf(tp.ns, at), manager: "kubernetes-replicator"})
		}
		revs := 2 + t%2
		for rev := 1; rev <= revs && len(out) < n; rev++ {
			out = append(out, realSecret{s: realHelmSecretOf(tp, rev, rev == revs, at), manager: "helm"})
		}
		if t%3 == 0 {
			out = append(out, realSecret{s: realTLSOf(tp), manager: "cert-manager-certificates-issuing", apply: true})
		}
		out = append(out, realSecret{s: realAppSecretOf(tp), manager: "helm", gitops: true})
	}
	out = out[:n]
	for i, s := range out {
		if s.s.Labels == nil {
			s.s.Labels = map[string]string{}
		}
		s.s.Labels[realBatchLabel] = strconv.Itoa(i / realBatchSize)
	}
	return out
}

func realRegcredOf(ns string, at time.Time) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "regcred", Annotations: map[string]string{
		"replicator.v1.mittwald.de/replicated-at":           at.Format(time.RFC3339),
		"replicator.v1.mittwald.de/replicated-from-version": "48213",
		"replicator.v1.mittwald.de/replicated-keys":         ".dockerconfigjson",
	}}, Type: corev1.SecretTypeDockerConfigJson, Data: map[string][]byte{corev1.DockerConfigJsonKey: realDockerConfig}}
}

// realDockerConfig is the pull secret's .dockerconfigjson: two registries'
// robot accounts, the same bytes in every namespace.
var realDockerConfig = func() []byte {
	r := rand.New(rand.NewPCG(37, 0xd0c))
	var b strings.Builder
	b.WriteString(`{"auths":{`)
	for i, reg := range []string{"registry.example.com", "ghcr.io"} {
		user, pass := "robot$ci-pull", randomName(r, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", 40)
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `%q:{"username":%q,"password":%q,"email":"ci@example.com","auth":%q}`, reg, user, pass,
			base64.StdEncoding.EncodeToString([]byte(user+":"+pass)))
	}
	b.WriteString("}}")
	return []byte(b.String())
}()

func realHelmSecretOf(tp realTemplate, rev int, last bool, at time.Time) *corev1.Secret {
	status := "superseded"
	if last {
		status = "deployed"
	}
	at = at.Add(time.Duration(rev) * 24 * time.Hour)
	labels := map[string]string{"name": tp.release, "owner": "helm", "status": status, "version": strconv.Itoa(rev),
		"createdAt": strconv.FormatInt(at.Unix(), 10)}
	if !last {
		labels["modifiedAt"] = strconv.FormatInt(at.Add(24*time.Hour).Unix(), 10)
	}
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: tp.ns, Name: fmt.Sprintf("sh.helm.release.v1.%s.v%d", tp.release, rev), Labels: labels},
		Type: "helm.sh/release.v1", Data: map[string][]byte{"release": realHelmRelease(tp, rev, status, at)}}
}

func realTLSOf(tp realTemplate) *corev1.Secret {
	r := rand.New(rand.NewPCG(uint64(tp.t), 0x715))
	host := tp.release + "." + tp.ns + ".apps.example.com"
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: tp.ns, Name: tp.release + "-tls",
		Labels: map[string]string{"controller.cert-manager.io/fao": "true"},
		Annotations: map[string]string{
			"cert-manager.io/alt-names": host, "cert-manager.io/certificate-name": tp.release + "-tls",
			"cert-manager.io/common-name": host, "cert-manager.io/ip-sans": "", "cert-manager.io/uri-sans": "",
			"cert-manager.io/issuer-group": "cert-manager.io", "cert-manager.io/issuer-kind": "ClusterIssuer",
			"cert-manager.io/issuer-name": "cluster-ca",
		}},
		Type: corev1.SecretTypeTLS,
		Data: map[string][]byte{
			corev1.TLSCertKey:       realPEM(r, "CERTIFICATE", 1020+r.IntN(80)),
			corev1.TLSPrivateKeyKey: realPEM(r, "RSA PRIVATE KEY", 1191+r.IntN(3)),
			"ca.crt":                realIssuerCA,
		}}
}

// realIssuerCA is the ClusterIssuer's CA certificate, in every TLS Secret.
var realIssuerCA = realPEM(rand.New(rand.NewPCG(37, 0xca)), "CERTIFICATE", 810)

// realPEM returns a PEM block of n random bytes (a certificate or key's
// DER is as incompressible).
func realPEM(r *rand.Rand, typ string, n int) []byte {
	der := make([]byte, n)
	for i := range der {
		der[i] = byte(r.Uint32())
	}
	enc := base64.StdEncoding.EncodeToString(der)
	var b strings.Builder
	b.WriteString("-----BEGIN " + typ + "-----\n")
	for len(enc) > 64 {
		b.WriteString(enc[:64] + "\n")
		enc = enc[64:]
	}
	b.WriteString(enc + "\n-----END " + typ + "-----\n")
	return []byte(b.String())
}

func realAppSecretOf(tp realTemplate) *corev1.Secret {
	r := rand.New(rand.NewPCG(uint64(tp.t), 0x5ec))
	const alnum = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	users := []string{"postgres", "postgres", "app", tp.chart.name}
	data := map[string][]byte{
		"DB_HOST": []byte(tp.release + "-db"), "DB_PORT": []byte("5432"), "DB_USER": []byte(users[r.IntN(len(users))]),
		"DB_NAME": []byte(tp.chart.name), "DB_PASSWORD": []byte(randomName(r, alnum, 24)), "DB_SSL": []byte("true"),
		"REDIS_PASSWORD": []byte(randomName(r, alnum, 32)), "API_KEY": []byte(randomName(r, "0123456789abcdef", 40)),
		"JWT_SECRET": []byte(randomName(r, alnum+"+/", 44)), "SMTP_ENABLED": []byte(strconv.FormatBool(r.IntN(3) > 0)),
	}
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: tp.ns, Name: tp.release + "-secrets", Labels: realHelmLabels(tp),
		Annotations: map[string]string{"meta.helm.sh/release-name": tp.release, "meta.helm.sh/release-namespace": tp.ns}},
		Type: corev1.SecretTypeOpaque, Data: data}
}

// writeRealSecret writes s as its manager would: cert-manager by
// server-side apply, the others by create; then, for a release's app
// secret, a GitOps controller applies its label and annotation.
func writeRealSecret(ctx context.Context, cs kubernetes.Interface, s realSecret, i int) error {
	secrets := cs.CoreV1().Secrets(s.s.Namespace)
	if s.apply {
		ac := corev1ac.Secret(s.s.Name, s.s.Namespace).WithLabels(s.s.Labels).WithAnnotations(s.s.Annotations).
			WithType(s.s.Type).WithData(s.s.Data)
		if _, err := secrets.Apply(ctx, ac, metav1.ApplyOptions{FieldManager: s.manager, Force: true}); err != nil {
			return fmt.Errorf("applying secret %d: %w", i, err)
		}
		return nil
	}
	if _, err := secrets.Create(ctx, s.s, metav1.CreateOptions{FieldManager: s.manager}); err != nil {
		return fmt.Errorf("creating secret %d: %w", i, err)
	}
	if !s.gitops {
		return nil
	}
	ac := corev1ac.Secret(s.s.Name, s.s.Namespace).
		WithLabels(map[string]string{"argocd.argoproj.io/instance": s.s.Namespace + "-" + s.s.Labels["app.kubernetes.io/instance"]}).
		WithAnnotations(map[string]string{"argocd.argoproj.io/tracking-id": s.s.Namespace + ":/Secret:" + s.s.Namespace + "/" + s.s.Name})
	if _, err := secrets.Apply(ctx, ac, metav1.ApplyOptions{FieldManager: "argocd-controller", Force: true}); err != nil {
		return fmt.Errorf("applying to secret %d: %w", i, err)
	}
	return nil
}
