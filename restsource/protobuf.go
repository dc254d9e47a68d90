package restsource

import (
	"bytes"
	"errors"
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"
)

// protoMagic starts every protobuf-encoded Kubernetes object.
var protoMagic = []byte{'k', '8', 's', 0}

// unknown is a parsed runtime.Unknown envelope; every field is a subslice
// of the input (nothing is copied).
type unknown struct {
	apiVersion, kind []byte // TypeMeta
	raw              []byte // the object's own message
	contentEncoding  []byte
	contentType      []byte
}

func (u unknown) describe() string {
	if len(u.kind) == 0 {
		return "an object without a kind"
	}
	return string(u.apiVersion) + " " + string(u.kind)
}

// parseUnknown strips the magic and parses the runtime.Unknown envelope
// of one protobuf-encoded object:
//
//	message Unknown { TypeMeta typeMeta = 1; bytes raw = 2;
//	                  string contentEncoding = 3; string contentType = 4; }
//	message TypeMeta { string apiVersion = 1; string kind = 2; }
func parseUnknown(data []byte) (unknown, error) {
	var u unknown
	if !bytes.HasPrefix(data, protoMagic) {
		return u, fmt.Errorf("not a protobuf-encoded object: expected the prefix %q, got %q", protoMagic, data[:min(len(data), len(protoMagic))])
	}
	err := eachField(data[len(protoMagic):], func(num protowire.Number, v []byte) error {
		switch num {
		case 1:
			return eachField(v, func(num protowire.Number, v []byte) error {
				switch num {
				case 1:
					u.apiVersion = v
				case 2:
					u.kind = v
				}
				return nil
			})
		case 2:
			u.raw = v
		case 3:
			u.contentEncoding = v
		case 4:
			u.contentType = v
		}
		return nil
	})
	if err != nil {
		return u, fmt.Errorf("malformed protobuf envelope: %w", err)
	}
	if len(u.contentEncoding) != 0 {
		return u, fmt.Errorf("unsupported content encoding %q", u.contentEncoding)
	}
	return u, nil
}

// parseProtoEvent parses one protobuf watch frame:
//
//	message WatchEvent { string type = 1; RawExtension object = 2; }
//	message RawExtension { bytes raw = 1; }
func parseProtoEvent(frame []byte) (typ, object []byte, err error) {
	err = eachField(frame, func(num protowire.Number, v []byte) error {
		switch num {
		case 1:
			typ = v
		case 2:
			return eachField(v, func(num protowire.Number, v []byte) error {
				if num == 1 {
					object = v
				}
				return nil
			})
		}
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("malformed protobuf watch event: %w", err)
	}
	return typ, object, nil
}

// parseProtoList splits the message of a generated list type (ListMeta
// metadata = 1; repeated Item items = 2) into its metadata and its items,
// appended to items.
func parseProtoList(msg []byte, items [][]byte) (listMeta []byte, _ [][]byte, err error) {
	err = eachField(msg, func(num protowire.Number, v []byte) error {
		switch num {
		case 1:
			listMeta = v
		case 2:
			items = append(items, v)
		}
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("malformed protobuf list: %w", err)
	}
	return listMeta, items, nil
}

// countProtoField counts the occurrences of field num in msg, to size a
// slice before parseProtoList fills it.
func countProtoField(msg []byte, want protowire.Number) int {
	n := 0
	for len(msg) > 0 {
		num, typ, l := protowire.ConsumeTag(msg)
		if l < 0 {
			return n
		}
		msg = msg[l:]
		l = protowire.ConsumeFieldValue(num, typ, msg)
		if l < 0 {
			return n
		}
		if num == want && typ == protowire.BytesType {
			n++
		}
		msg = msg[l:]
	}
	return n
}

var errWireType = errors.New("a field of the wrong wire type")

// eachField calls fn with the number and value of every length-delimited
// field of msg, in order; fields of other wire types are skipped, except
// that the known fields (numbers 1 to 4 here) must be length-delimited.
func eachField(msg []byte, fn func(num protowire.Number, v []byte) error) error {
	for len(msg) > 0 {
		num, typ, n := protowire.ConsumeTag(msg)
		if n < 0 {
			return parseError(n)
		}
		msg = msg[n:]
		if typ != protowire.BytesType {
			if num >= 1 && num <= 4 {
				return fmt.Errorf("field %d: %w", num, errWireType)
			}
			n = protowire.ConsumeFieldValue(num, typ, msg)
			if n < 0 {
				return parseError(n)
			}
			msg = msg[n:]
			continue
		}
		v, n := protowire.ConsumeBytes(msg)
		if n < 0 {
			return parseError(n)
		}
		msg = msg[n:]
		if err := fn(num, v); err != nil {
			return err
		}
	}
	return nil
}

// parseError describes a protowire failure without wrapping it: a
// truncated field is a malformed message, not the end of the stream.
func parseError(n int) error {
	return fmt.Errorf("invalid field: %v", protowire.ParseError(n))
}
