package restsource

import (
	"fmt"

	"github.com/listwatch/listwatch/restsource/internal/jsonwire"
)

// A watch frame's envelope and a list's items are split by the scanner
// of [jsonwire], without decoding them; only the objects themselves go
// through the (much slower) typed decoder, which validates them
// completely.

// eachMember calls fn with the key and the value's span of every member of
// the JSON object that is all of b ([jsonwire.EachMember]). Keys are
// matched case-sensitively by the callers, as Kubernetes' decoders do.
func eachMember(b []byte, fn func(key, value []byte) error) error {
	return jsonwire.EachMember(b, func(key []byte, _, valStart, valEnd int) error {
		return fn(key, b[valStart:valEnd])
	})
}

// jsonString decodes the JSON string v ([jsonwire.Unquote]), or null.
func jsonString(v []byte) ([]byte, error) {
	if string(v) == "null" {
		return nil, nil
	}
	s, _, err := jsonwire.Unquote(v)
	return s, err
}

// parseJSONEvent splits a JSON watch frame {"type": ..., "object": {...}}
// into the event type and the object's span. A missing object is
// returned as nil.
func parseJSONEvent(frame []byte) (typ, object []byte, err error) {
	err = eachMember(frame, func(key, v []byte) error {
		switch string(key) {
		case "type":
			s, err := jsonString(v)
			if err != nil {
				return err
			}
			typ = s
		case "object":
			object = v
		}
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("malformed JSON watch event: %w", err)
	}
	return typ, object, nil
}

// jsonList is a JSON list split into its parts.
type jsonList struct {
	apiVersion, kind []byte
	metadata         []byte
	items            [][]byte
}

func parseJSONList(body []byte) (jsonList, error) {
	var l jsonList
	if err := eachMember(body, l.member); err != nil {
		return l, fmt.Errorf("malformed JSON list: %w", err)
	}
	return l, nil
}

// member reads the list's member key, of value v (which l keeps).
func (l *jsonList) member(key, v []byte) (err error) {
	switch string(key) {
	case "apiVersion":
		l.apiVersion, err = jsonString(v)
	case "kind":
		l.kind, err = jsonString(v)
	case "metadata":
		l.metadata = v
	case "items":
		l.items, err = jsonwire.AppendElements(l.items[:0], v)
	}
	return err
}
