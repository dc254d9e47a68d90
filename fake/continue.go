package fake

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
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

func encodeContinue(start string, rv int64) string {
	data, _ := json.Marshal(continueToken{APIVersion: continueAPIVersion, RV: rv, Start: start})
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
	return t, nil
}
