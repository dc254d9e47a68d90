package fake

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"strings"
)

// continueToken is the decoded form of a list continue token. The encoding
// follows kube-apiserver's: base64url (unpadded) JSON with fields v, rv and
// start. rv -1 means "continue at the latest RV" (the inconsistent token
// handed out with a 410).
type continueToken struct {
	APIVersion string `json:"v"`
	RV         int64  `json:"rv"`
	// Start is the first key the next page may contain.
	Start string `json:"start"`
}

const continueAPIVersion = "meta.k8s.io/v1"

// encodeContinue encodes a token for a start key relative to the list's
// prefix (a name in a namespaced list, "ns/name" across namespaces). Like
// kube-apiserver, which trims "/registry/<resource>[/<ns>]" off its etcd
// keys, the token's start keeps a leading "/".
func encodeContinue(start string, rv int64) string {
	data, _ := json.Marshal(continueToken{APIVersion: continueAPIVersion, RV: rv, Start: "/" + start})
	return base64.RawURLEncoding.EncodeToString(data)
}

func decodeContinue(s string) (continueToken, error) {
	var t continueToken
	data, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return t, fmt.Errorf("continue key is not valid: %v", err)
	}
	if err := json.Unmarshal(data, &t); err != nil {
		return t, fmt.Errorf("continue key is not valid: %v", err)
	}
	switch {
	case t.APIVersion != continueAPIVersion:
		return t, fmt.Errorf("continue key is not valid: server does not recognize this encoded version %q", t.APIVersion)
	case t.RV == 0:
		return t, errors.New("continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)")
	case t.Start == "":
		return t, errors.New("continue key is not valid: encoded start key empty (version meta.k8s.io/v1)")
	}
	// kube-apiserver accepts a start with or without the leading "/" but
	// rejects one that path cleaning would change (a traversal such as
	// "/../x"); the decoded start is relative to the list's prefix.
	start := t.Start
	if !strings.HasPrefix(start, "/") {
		start = "/" + start
	}
	if path.Clean(start) != start {
		return t, fmt.Errorf("continue key is not valid: %s", t.Start)
	}
	t.Start = start[1:]
	return t, nil
}
