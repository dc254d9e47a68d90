package testapiserver

import (
	"crypto/ecdsa"
	"crypto/x509"
	"encoding/csv"
	"encoding/pem"
	"os"
	"slices"
	"testing"
)

func TestNewCredentials(t *testing.T) {
	c, err := newCredentials(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if c.adminToken == c.userToken || len(c.adminToken) != 32 {
		t.Fatalf("tokens must be distinct 32-hex strings, got %q and %q", c.adminToken, c.userToken)
	}
	f, err := os.Open(c.tokenFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.FieldsPerRecord = -1
	rows, err := r.ReadAll()
	if err != nil {
		t.Fatalf("token file is not CSV: %v", err)
	}
	want := [][]string{
		{c.adminToken, AdminUser, AdminUser + "-uid", "system:masters"},
		{c.userToken, UnprivilegedUser, UnprivilegedUser + "-uid"},
	}
	if !slices.EqualFunc(rows, want, slices.Equal) {
		t.Errorf("token file rows = %q, want %q", rows, want)
	}

	key := readPEM(t, c.saKeyFile, "PRIVATE KEY")
	priv, err := x509.ParsePKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := x509.ParsePKIXPublicKey(readPEM(t, c.saPubFile, "PUBLIC KEY"))
	if err != nil {
		t.Fatal(err)
	}
	if !priv.(*ecdsa.PrivateKey).PublicKey.Equal(pub) {
		t.Error("service-account public key does not match the private key")
	}
}

// readPEM returns the DER bytes of the single PEM block of the given type in path.
func readPEM(t *testing.T, path, typ string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	block, rest := pem.Decode(data)
	if block == nil || block.Type != typ || len(rest) != 0 {
		t.Fatalf("%s: want exactly one %q PEM block", path, typ)
	}
	return block.Bytes
}
