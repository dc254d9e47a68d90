package restsource

import (
	"bytes"
	"errors"
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/listwatch/listwatch/restsource/internal/wire"
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
	err := u.parse(data[len(protoMagic):]) // before u is returned
	return u, err
}

// parse reads the fields of the envelope msg (or of a part of it: a list
// read as it arrives has its envelope read in two) into u, and checks
// that they name no content encoding.
func (u *unknown) parse(msg []byte) error {
	err := eachField(msg, func(num protowire.Number, v []byte) error {
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
		return fmt.Errorf("malformed protobuf envelope: %w", err)
	}
	if len(u.contentEncoding) != 0 {
		return fmt.Errorf("unsupported content encoding %q", u.contentEncoding)
	}
	return nil
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
// metadata = 1; repeated Item items = 2) into its metadata and its items.
func parseProtoList(msg []byte) (listMeta []byte, items [][]byte, err error) {
	items = make([][]byte, 0, wire.Count(msg)) // the items, and the metadata
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

var errWireType = errors.New("a field of the wrong wire type")

// eachField calls fn with the number and value of every length-delimited
// field of msg, in order; fields of other wire types are skipped, except
// that the known fields (numbers 1 to 4 here) must be length-delimited.
func eachField(msg []byte, fn func(num protowire.Number, v []byte) error) error {
	f := wire.New(msg)
	for f.Next() {
		if f.Type != protowire.BytesType {
			if err := knownBytes(&f); err != nil {
				return err
			}
			continue
		}
		if err := fn(f.Num, f.Bytes()); err != nil {
			return err
		}
	}
	if f.Err() == nil {
		return nil
	}
	if err := knownBytes(&f); err != nil {
		return err // the wire type, told before the value
	}
	// Not wrapped: a truncated field is a malformed message, not the end
	// of the stream.
	return fmt.Errorf("invalid field: %v", f.Err())
}

// knownBytes reports an error if f's field is a known one (numbers 1 to
// 4) that is not length-delimited.
func knownBytes(f *wire.Fields) error {
	if f.Num >= 1 && f.Num <= 4 && f.Type != protowire.BytesType {
		return fmt.Errorf("field %d: %w", f.Num, errWireType)
	}
	return nil
}
