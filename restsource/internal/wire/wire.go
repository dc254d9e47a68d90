// Package wire reads protobuf messages field by field without decoding
// them: the one field iterator, [Fields], through which restsource reads
// envelopes, watch events, lists (whole or as they arrive), objects split
// into parts and projections. It knows nothing of Kubernetes.
//
// Fields reads by [protowire]'s rules, or (see [Gogo]) by the more lenient
// rules of the generated (gogo) decoders.
package wire

import (
	"io"

	"google.golang.org/protobuf/encoding/protowire"
)

// Fields iterates over the fields of a protobuf message, in order, with
// nothing copied:
//
//	f := wire.New(msg)
//	for f.Next() {
//		// f.Num, f.Type, f.Bytes() or f.Varint
//	}
//
// (Not "for f := wire.New(msg); f.Next(); {": a loop's own variable is
// copied at every iteration.)
//
// Next stops at the end of the message or at a field it cannot read; Err
// then tells which.
type Fields struct {
	// Num and Type are the current field's number and wire type; they are
	// also set when its tag was read but its value could not be.
	Num  protowire.Number
	Type protowire.Type
	// Varint is a varint field's value (see [Fields.Bytes] for a
	// length-delimited field's).
	Varint uint64

	msg              []byte
	start, val, next int // the current field's tag, value and end
	length           int // a length-delimited value's length
	err              error
	gogo, prefix     bool
}

// New returns the fields of msg, read by protowire's rules.
func New(msg []byte) Fields { return Fields{msg: msg} }

// Prefix returns the fields of msg, the first bytes of a message read from
// a stream: the last length-delimited field's value may run past the end
// of msg, Next then returning what there is of it in Bytes and its full
// length in Len.
func Prefix(msg []byte) Fields { return Fields{msg: msg, prefix: true} }

// Gogo returns the fields of msg, read as the generated (gogo) decoders
// read them, which is more lenient than protowire's rules: a varint has up
// to 10 bytes whatever its last one holds, a tag's field number is the low
// 32 bits of its value shifted, and a group is skipped by depth, whatever
// its end's number. A projection reads by these rules so that it accepts
// exactly what the source type's Unmarshal accepts.
func Gogo(msg []byte) Fields { return Fields{msg: msg, gogo: true} }

// Next reads the next field, reporting whether there was one to read.
func (f *Fields) Next() bool {
	if f.err != nil || f.next >= len(f.msg) {
		return false
	}
	f.start = f.next
	if f.gogo {
		return f.nextGogo()
	}
	b := f.msg[f.start:]
	num, typ, n := protowire.Number(b[0]>>3), protowire.Type(b[0]&7), 1
	if b[0] < 8 || b[0] >= 0x80 { // not a tag of one byte
		if num, typ, n = protowire.ConsumeTag(b); n < 0 {
			return f.fail(0, 0, protowire.ParseError(n))
		}
	}
	f.Num, f.Type, f.val = num, typ, f.start+n
	var m int
	switch typ {
	case protowire.BytesType:
		l, m := uint64(0), 1
		if len(b) > n && b[n] < 0x80 {
			l = uint64(b[n]) // a length of one byte
		} else if l, m = protowire.ConsumeVarint(b[n:]); m < 0 {
			return f.fail(num, typ, protowire.ParseError(m))
		}
		avail := len(b) - n - m
		if l > uint64(avail) && (!f.prefix || l > uint64(maxInt)) {
			return f.fail(num, typ, io.ErrUnexpectedEOF)
		}
		f.val, f.length = f.start+n+m, int(l)
		f.next = f.val + min(f.length, avail)
		return true
	case protowire.VarintType:
		f.Varint, m = protowire.ConsumeVarint(b[n:])
	default:
		m = protowire.ConsumeFieldValue(num, typ, b[n:])
	}
	if m < 0 {
		return f.fail(num, typ, protowire.ParseError(m))
	}
	f.next = f.start + n + m
	return true
}

const maxInt = int(^uint(0) >> 1)

func (f *Fields) fail(num protowire.Number, typ protowire.Type, err error) bool {
	f.Num, f.Type, f.err, f.val = num, typ, err, f.start // Bytes() is empty
	return false
}

// Err returns what stopped Next before the end of the message, or nil: a
// [protowire.ParseError] (io.ErrUnexpectedEOF for a truncated message), or
// for Gogo the generated decoders' errors.
func (f *Fields) Err() error { return f.err }

// Start and End return the span of the current field in the message, its
// tag included: a run of fields is msg[first.Start():last.End()].
func (f *Fields) Start() int { return f.start }
func (f *Fields) End() int   { return f.next }

// HeadLen returns the length of the current field's tag and, if it is
// length-delimited, of the varint of its length: where its value starts.
func (f *Fields) HeadLen() int { return f.val - f.start }

// Bytes returns a length-delimited field's value (in a [Prefix], what of
// it there is). It is a method, not a field, so that Next stores no
// pointers: a loop's Fields lives on its stack, and stores to it need no
// write barriers.
func (f *Fields) Bytes() []byte { return f.msg[f.val:f.next] }

// Len returns the length of a length-delimited field's value: len(Bytes())
// but in a Prefix.
func (f *Fields) Len() int { return f.length }

// Rest returns the message from the current field's value to its end:
// what a map entry may read past its own end ([MapEntry]).
func (f *Fields) Rest() []byte { return f.msg[f.val:] }

// Count returns the number of fields of msg that Next reads.
func Count(msg []byte) int {
	n := 0
	f := New(msg)
	for f.Next() {
		n++
	}
	return n
}

// Valid reports whether msg splits into fields.
func Valid(msg []byte) bool {
	f := New(msg)
	for f.Next() {
	}
	return f.Err() == nil
}
