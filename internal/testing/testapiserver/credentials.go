package testapiserver

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
)

const (
	// AdminUser is the user name behind Server.AdminConfig; it is in the
	// system:masters group and may do anything.
	AdminUser = "listwatch-admin"
	// UnprivilegedUser is the user name behind Server.UnprivilegedConfig. It
	// has no groups beyond system:authenticated and no RBAC bindings, so
	// nearly every request it makes is forbidden.
	UnprivilegedUser = "listwatch-user"
)

// credentials are the files and secrets one apiserver is started with.
// They are made once per Server and reused across restarts.
type credentials struct {
	// adminToken and userToken are random bearer tokens listed in tokenFile.
	adminToken, userToken string
	// tokenFile is the --token-auth-file CSV.
	tokenFile string
	// saKeyFile and saPubFile are the service-account signing key (PKCS#8)
	// and its public half (PKIX), both PEM.
	saKeyFile, saPubFile string
}

// newCredentials writes a token file and a service-account key pair in dir.
func newCredentials(dir string) (*credentials, error) {
	c := &credentials{
		adminToken: randomToken(),
		userToken:  randomToken(),
		tokenFile:  filepath.Join(dir, "tokens.csv"),
		saKeyFile:  filepath.Join(dir, "sa.key"),
		saPubFile:  filepath.Join(dir, "sa.pub"),
	}
	tokens := fmt.Sprintf("%s,%s,%s-uid,\"system:masters\"\n%s,%s,%s-uid\n",
		c.adminToken, AdminUser, AdminUser, c.userToken, UnprivilegedUser, UnprivilegedUser)
	if err := os.WriteFile(c.tokenFile, []byte(tokens), 0o600); err != nil {
		return nil, fmt.Errorf("testapiserver: writing token file: %w", err)
	}
	if err := writeServiceAccountKeys(c.saKeyFile, c.saPubFile); err != nil {
		return nil, err
	}
	return c, nil
}

// writeServiceAccountKeys generates an ECDSA P-256 key pair (fast, and
// accepted by the apiserver for ES256 tokens) and writes it as PEM.
func writeServiceAccountKeys(keyPath, pubPath string) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return fmt.Errorf("testapiserver: generating service-account key: %w", err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return fmt.Errorf("testapiserver: encoding service-account key: %w", err)
	}
	pubDER, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return fmt.Errorf("testapiserver: encoding service-account public key: %w", err)
	}
	if err := os.WriteFile(keyPath, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		return fmt.Errorf("testapiserver: writing service-account key: %w", err)
	}
	if err := os.WriteFile(pubPath, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER}), 0o600); err != nil {
		return fmt.Errorf("testapiserver: writing service-account public key: %w", err)
	}
	return nil
}

// randomToken returns 32 random hex characters.
func randomToken() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on supported platforms
	return hex.EncodeToString(b)
}
