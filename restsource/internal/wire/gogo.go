package wire

import (
	"errors"
	"fmt"
	"io"

	"google.golang.org/protobuf/encoding/protowire"
)

// The readers below follow the generated (gogo) decoders' rules ([Gogo]).

var (
	errOverflow = errors.New("integer overflow")
	errLength   = errors.New("invalid length")
	errTag      = errors.New("illegal tag")
)

// nextGogo is Next for Gogo.
func (f *Fields) nextGogo() bool {
	b := f.msg[f.start:]
	wire, n, err := gogoVarint(b)
	if err != nil {
		return f.fail(0, 0, err)
	}
	num, typ := protowire.Number(int32(wire>>3)), protowire.Type(wire&7)
	if typ == protowire.EndGroupType || num <= 0 {
		return f.fail(0, 0, errTag)
	}
	f.Num, f.Type, f.val = num, typ, f.start+n
	var m int
	switch typ {
	case protowire.BytesType:
		var v []byte
		v, m, err = gogoBytes(b[n:])
		f.val, f.length = f.start+n+m-len(v), len(v)
	case protowire.VarintType:
		f.Varint, m, err = gogoVarint(b[n:])
	default:
		m, err = gogoSkip(b)
		m -= n
	}
	if err != nil {
		return f.fail(num, typ, err)
	}
	f.next = f.start + n + m
	return true
}

// gogoVarint reads a varint at b[0:].
func gogoVarint(b []byte) (uint64, int, error) {
	var x uint64
	for i := 0; ; i++ {
		if i >= 10 {
			return 0, 0, errOverflow
		}
		if i >= len(b) {
			return 0, 0, io.ErrUnexpectedEOF
		}
		c := b[i]
		x |= uint64(c&0x7f) << (7 * i)
		if c < 0x80 {
			return x, i + 1, nil
		}
	}
}

// gogoBytes reads a length-delimited value.
func gogoBytes(b []byte) ([]byte, int, error) {
	l, n, err := gogoVarint(b)
	if err != nil {
		return nil, 0, err
	}
	end := n + int(l)
	if int(l) < 0 || end < 0 {
		return nil, 0, errLength
	}
	if end > len(b) {
		return nil, 0, io.ErrUnexpectedEOF
	}
	return b[n:end], end, nil
}

// gogoSkip returns the length of the field (tag included) at b[0:].
func gogoSkip(b []byte) (int, error) {
	i, depth := 0, 0
	for {
		wire, n, err := gogoVarint(b[i:])
		if err != nil {
			return 0, err
		}
		i += n
		switch protowire.Type(wire & 7) {
		case protowire.VarintType:
			_, n, err = gogoVarint(b[i:])
		case protowire.Fixed64Type:
			n = 8
		case protowire.BytesType:
			_, n, err = gogoBytes(b[i:])
		case protowire.StartGroupType:
			depth++
		case protowire.EndGroupType:
			if depth == 0 {
				return 0, errors.New("unexpected end of group")
			}
			depth--
		case protowire.Fixed32Type:
			n = 4
		default:
			return 0, fmt.Errorf("illegal wireType %d", wire&7)
		}
		if err != nil {
			return 0, err
		}
		if t := protowire.Type(wire & 7); t != protowire.StartGroupType && t != protowire.EndGroupType {
			i += n
		}
		if i > len(b) {
			return 0, io.ErrUnexpectedEOF
		}
		if depth == 0 {
			return i, nil
		}
	}
}

// MapEntry reads the map entry buf[:n] as the generated decoders do,
// quirks included, calling fn with each key (num 1) and value (num 2) in
// order: they are read as length-delimited whatever their wire types say,
// and may run past the entry's end up to the end of buf (the rest of the
// enclosing message, [Fields.Rest]); other fields are skipped.
func MapEntry(buf []byte, n int, fn func(num protowire.Number, raw []byte) error) error {
	for i := 0; i < n; {
		wire, m, err := gogoVarint(buf[i:])
		if err != nil {
			return err
		}
		num := protowire.Number(int32(wire >> 3))
		if num != 1 && num != 2 {
			skip, err := gogoSkip(buf[i:])
			if err != nil {
				return err
			}
			if i+skip > n {
				return io.ErrUnexpectedEOF
			}
			i += skip
			continue
		}
		raw, l, err := gogoBytes(buf[i+m:])
		if err != nil {
			return err
		}
		i += m + l
		if err := fn(num, raw); err != nil {
			return err
		}
	}
	return nil
}
