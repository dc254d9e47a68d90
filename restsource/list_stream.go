package restsource

import (
	"bufio"
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"

	"google.golang.org/protobuf/encoding/protowire"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/listwatch/listwatch/restsource/internal/jsonwire"
	"github.com/listwatch/listwatch/restsource/internal/wire"
)

// Reading a list response as it arrives: its items are decoded a batch at
// a time, from a buffer that is reused, so that while a list is decoded
// only the objects (which the cache keeps) and about listBatchBytes of
// their encodings are alive, never the whole response: a 20,000-pod list
// is about 200 MB of protobuf. Responses this reader does not expect (not
// the list's kind, a Status, a type without a generated decoder) are read
// whole and decoded as before (list.go).

// errExotic is an encoding that the whole-body decoding accepts and that
// no server writes: a protobuf group, a JSON list with two items members.
var errExotic = errors.New("an encoding no server writes")

// maxListItem bounds what is allocated for one field of a list before
// its bytes arrive: far more than any object a server stores.
const maxListItem = 64 << 20

// listBatchBytes is the size of the batch of encoded items decoded at once.
const listBatchBytes = 1 << 20

// readList reads and decodes a list response from r.
func (s *source[T]) readList(r *bufio.Reader) (runtime.Object, error) {
	head, _ := r.Peek(len(protoMagic))
	if bytes.Equal(head, protoMagic) && s.dec.fast {
		if list, ok, err := s.streamProtobufList(r); ok {
			return list, err
		}
	} else if !bytes.Equal(head, protoMagic) {
		if list, ok, err := s.streamJSONList(r); ok {
			return list, err
		}
	}
	body, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	return s.decodeList(body)
}

// itemBatch collects encoded items and decodes them a batch at a time;
// items is never nil (an empty list has no items, as list.go has it).
type itemBatch struct {
	buf   []byte
	raws  [][]byte
	items []runtime.RawExtension
	// decode decodes a batch whose first item is item base of the list.
	decode func(raws [][]byte, base int) ([]runtime.RawExtension, error)
}

// add appends one item's encoding, read by read into a slice of the
// batch's buffer of n bytes; a full batch is decoded first.
func (b *itemBatch) add(n int, read func([]byte) error) error {
	if len(b.buf)+n > cap(b.buf) && len(b.raws) > 0 {
		if err := b.flush(); err != nil {
			return err
		}
	}
	if cap(b.buf) < n {
		b.buf = make([]byte, 0, max(n, listBatchBytes))
	}
	start := len(b.buf)
	b.buf = b.buf[:start+n]
	if err := read(b.buf[start:]); err != nil {
		return err
	}
	b.raws = append(b.raws, b.buf[start:])
	return nil
}

func (b *itemBatch) flush() error {
	if len(b.raws) == 0 {
		return nil
	}
	items, err := b.decode(b.raws, len(b.items))
	if err != nil {
		return err
	}
	b.items = append(b.items, items...)
	clear(b.raws)
	b.raws, b.buf = b.raws[:0], b.buf[:0]
	return nil
}

// streamProtobufList decodes a protobuf list from r as it arrives; ok is
// false, with nothing read, if the response is not plainly T's list
// (readList then reads it whole).
func (s *source[T]) streamProtobufList(r *bufio.Reader) (_ runtime.Object, ok bool, err error) {
	d := s.dec
	// The envelope's TypeMeta comes first, and the list's message next:
	// both start in the first bytes, looked at without reading them, the
	// TypeMeta read as parseUnknown reads it.
	head, _ := r.Peek(512)
	msg := head[len(protoMagic):]
	f := wire.Prefix(msg)
	var u unknown
	if !f.Next() || f.Num != 1 || f.Type != protowire.BytesType || f.Len() != len(f.Bytes()) ||
		u.parse(msg[:f.End()]) != nil || !d.listKindOK(u.kind, u.apiVersion) {
		return nil, false, nil
	}
	if !f.Next() || f.Num != 2 || f.Type != protowire.BytesType {
		return nil, false, nil
	}
	if _, err := r.Discard(len(protoMagic) + f.Start() + f.HeadLen()); err != nil {
		return nil, true, err
	}
	list := &metav1.List{}
	b := &itemBatch{items: []runtime.RawExtension{}, decode: func(raws [][]byte, base int) ([]runtime.RawExtension, error) {
		return s.decodeItems(raws, base, func(raw []byte) (T, error) { return d.message(raw, nil) })
	}}
	malformed := func(err error) (runtime.Object, bool, error) {
		return nil, true, fmt.Errorf("malformed protobuf list: %w", err)
	}
	lr := &limited{r: r, n: int64(f.Len())}
	for lr.n > 0 {
		// A field's tag and length, or the whole of a field of a fixed
		// or varint type, fit in fieldHead bytes.
		head, perr := r.Peek(int(min(lr.n, fieldHead)))
		f := wire.Prefix(head)
		read := f.Next()
		switch {
		case knownBytes(&f) != nil:
			return malformed(knownBytes(&f)) // as eachField has it
		case f.Type == protowire.StartGroupType || f.Type == protowire.EndGroupType:
			return malformed(fmt.Errorf("field %d of wire type %d: %w", f.Num, f.Type, errExotic))
		case !read && perr != nil:
			return malformed(orUnexpectedEOF(perr))
		case !read:
			return malformed(f.Err())
		case f.Type != protowire.BytesType:
			if err := lr.skip(f.End()); err != nil {
				return nil, true, err
			}
			continue
		case int64(f.Len()) > lr.n-int64(f.HeadLen()):
			return malformed(io.ErrUnexpectedEOF)
		case f.Len() > maxListItem:
			return malformed(fmt.Errorf("a field of %d bytes: %w", f.Len(), errExotic))
		}
		if err := lr.skip(f.HeadLen()); err != nil {
			return nil, true, err
		}
		l := f.Len()
		switch f.Num {
		case 1:
			meta := make([]byte, l)
			if _, err := io.ReadFull(lr, meta); err != nil {
				return nil, true, orUnexpectedEOF(err)
			}
			if err := list.ListMeta.Unmarshal(meta); err != nil {
				return nil, true, fmt.Errorf("decoding the list's metadata: %w", err)
			}
		case 2:
			if err := b.add(l, func(buf []byte) error { _, err := io.ReadFull(lr, buf); return orUnexpectedEOF(err) }); err != nil {
				return nil, true, err
			}
		default:
			if _, err := io.CopyN(io.Discard, lr, int64(l)); err != nil {
				return nil, true, orUnexpectedEOF(err)
			}
		}
	}
	if err := b.flush(); err != nil {
		return nil, true, err
	}
	// What follows the list in the envelope: its content encoding and
	// type, read as parseUnknown reads them.
	tail, err := io.ReadAll(r)
	if err != nil {
		return nil, true, err
	}
	if err := new(unknown).parse(tail); err != nil {
		return nil, true, err
	}
	list.Items = b.items
	return list, true, nil
}

// fieldHead bounds the bytes of a field's tag and its length or value:
// varints of at most 10 bytes each.
const fieldHead = 20

func orUnexpectedEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// limited reads at most n more bytes of r.
type limited struct {
	r *bufio.Reader
	n int64
}

// skip skips n bytes that r has buffered.
func (l *limited) skip(n int) error {
	m, err := l.r.Discard(n)
	l.n -= int64(m)
	return err
}

func (l *limited) Read(p []byte) (int, error) {
	if l.n <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > l.n {
		p = p[:l.n]
	}
	m, err := l.r.Read(p)
	l.n -= int64(m)
	return m, err
}

// streamJSONList decodes a JSON list from r as it arrives: its items a
// batch at a time, its other members (kind, apiVersion, metadata) kept;
// ok is false, with nothing read, if r does not start with an object.
func (s *source[T]) streamJSONList(r *bufio.Reader) (_ runtime.Object, ok bool, err error) {
	d := s.dec
	jr := &jsonReader{r: r}
	if c, err := jr.peek(); err != nil || c != '{' {
		return nil, false, nil
	}
	b := &itemBatch{items: []runtime.RawExtension{}, decode: func(raws [][]byte, base int) ([]runtime.RawExtension, error) {
		return s.decodeItems(raws, base, d.jsonItem)
	}}
	// The members other than items are read into l as they arrive, and
	// kept for a Status, which is decoded whole, and for an error.
	var l jsonList
	other := []byte{'{'}
	itemsSeen := false
	malformed := func(err error) (runtime.Object, bool, error) {
		return nil, true, fmt.Errorf("malformed JSON list: %w", err)
	}
	e, i, _ := jsonwire.Open(jr.buf, jr.pos, '{') // peeked
	for jr.pos = i; ; {
		if more, err := jr.next(&e); err != nil || !more {
			if err != nil {
				return malformed(err)
			}
			break
		}
		if string(e.Key) == "items" {
			if itemsSeen {
				return malformed(errExotic)
			}
			itemsSeen = true
			if err := jr.items(b); err != nil {
				return malformed(err)
			}
			continue
		}
		keyEnd, _, _ := jsonwire.SkipString(jr.buf, e.KeyStart) // read whole by next
		if len(other) > 1 {
			other = append(other, ',')
		}
		other = append(append(other, jr.buf[e.KeyStart:keyEnd]...), ':')
		v, err := jr.value()
		if err != nil {
			return malformed(err)
		}
		other = append(other, v...)
		if err := l.member(e.Key, other[len(other)-len(v):]); err != nil {
			return malformed(err)
		}
	}
	if c, err := jr.peek(); err != io.EOF {
		if err == nil {
			err = fmt.Errorf("invalid character %q after the top-level JSON object", c)
		}
		return malformed(err)
	}
	other = append(other, '}')
	list, err := d.jsonListHead(&l, other)
	if err == nil {
		err = b.flush()
	}
	if err != nil {
		return nil, true, err
	}
	list.Items = b.items
	d.setItemKinds(list.Items, l.kind)
	return list, true, nil
}

// jsonReader reads JSON values from r, buffering what it needs; a value
// it returns is valid until the next call.
type jsonReader struct {
	r    io.Reader
	max  int // if set, the longest object or array value takes
	scan jsonwire.Scanner
	buf  []byte
	pos  int // next byte of buf to look at
}

// peek returns the next byte that is not a space, without taking it.
func (j *jsonReader) peek() (byte, error) {
	for {
		if j.pos = jsonwire.SkipSpace(j.buf, j.pos); j.pos < len(j.buf) {
			return j.buf[j.pos], nil
		}
		if err := j.fill(); err != nil {
			return 0, err
		}
	}
}

// next takes e's step to the next entry ([jsonwire.Entries.Next]),
// reading more as it needs.
func (j *jsonReader) next(e *jsonwire.Entries) (more bool, _ error) {
	for {
		i, more, err := e.Next(j.buf, j.pos)
		if err == nil {
			j.pos = i
			return more, nil
		}
		if err != jsonwire.ErrEnd {
			return false, err
		}
		if err := j.fill(); err != nil {
			return false, orUnexpectedEOF(err)
		}
	}
}

// fill drops what was taken and reads more.
func (j *jsonReader) fill() error {
	n := copy(j.buf, j.buf[j.pos:])
	j.buf, j.pos = j.buf[:n], 0
	if cap(j.buf)-n < 32<<10 {
		nb := make([]byte, n, max(2*cap(j.buf), 64<<10))
		copy(nb, j.buf)
		j.buf = nb
	}
	m, err := j.r.Read(j.buf[n:cap(j.buf)])
	j.buf = j.buf[:n+m]
	if m > 0 {
		return nil
	}
	if err == nil {
		err = io.ErrNoProgress
	}
	return err
}

// value takes the next value, whole: an object or an array is scanned as
// it arrives ([jsonwire.Scanner]), up to max bytes if max is set; any
// other value is read again whole as more of it arrives.
func (j *jsonReader) value() ([]byte, error) {
	c, err := j.peek()
	if err != nil {
		return nil, orUnexpectedEOF(err)
	}
	for scanned := 0; ; {
		end, err := -1, error(nil)
		if c == '{' || c == '[' {
			var n int
			if n, err = j.scan.Scan(j.buf[j.pos+scanned:]); n >= 0 {
				end = j.pos + scanned + n
			}
		} else if end, _, err = jsonwire.SkipValue(j.buf, j.pos); err == jsonwire.ErrEnd || err == nil && end == len(j.buf) && c != '"' {
			end, err = -1, nil // a number or literal at the end of the buffer may go on
		}
		if err != nil {
			return nil, err
		}
		if end >= 0 {
			v := j.buf[j.pos:end]
			j.pos = end
			return v, nil
		}
		if scanned = len(j.buf) - j.pos; j.max > 0 && scanned >= j.max {
			return nil, errFrameTooLarge
		}
		if err := j.fill(); err == io.EOF && c != '"' && c != '{' && c != '[' && scanned > 0 {
			v := j.buf[j.pos:] // a number or literal ends the input
			j.pos = len(j.buf)
			return v, nil
		} else if err != nil {
			return nil, orUnexpectedEOF(err)
		}
	}
}

// items takes the array of items (or null), each into the batch.
func (j *jsonReader) items(b *itemBatch) error {
	c, err := j.peek()
	if err != nil {
		return orUnexpectedEOF(err)
	}
	if c == 'n' {
		if v, err := j.value(); err != nil || string(v) != "null" {
			return cmp.Or(err, jsonwire.ErrNotArray)
		}
		return nil
	}
	e, i, err := jsonwire.Open(j.buf, j.pos, '[')
	if err != nil {
		return jsonwire.ErrNotArray
	}
	for j.pos = i; ; {
		if more, err := j.next(&e); err != nil || !more {
			return err
		}
		v, err := j.value()
		if err != nil {
			return err
		}
		if err := b.add(len(v), func(buf []byte) error { copy(buf, v); return nil }); err != nil {
			return err
		}
	}
}
