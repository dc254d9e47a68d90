package restsource

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// maxFrame is the largest watch frame accepted, client-go's limit.
const maxFrame = 16 << 20

var errFrameTooLarge = errors.New("object to decode was longer than maximum allowed size")

// frameReader reads the frames of a watch stream into caller-owned
// buffers. It is used by one goroutine.
type frameReader interface {
	// next appends the next frame to buf[:0] and returns it. At the end of
	// the stream it returns io.EOF, or io.ErrUnexpectedEOF inside a frame.
	next(buf []byte) ([]byte, error)
	// pending reports whether more of the stream has already arrived
	// (read from the connection and not yet returned as a frame): a
	// backlog, as opposed to a trickle of events.
	pending() bool
}

// protoFrames reads length-prefixed frames: a 4-byte big-endian length,
// then that many bytes of a WatchEvent message.
type protoFrames struct {
	r   *bufio.Reader
	hdr [4]byte
}

func (f *protoFrames) next(buf []byte) ([]byte, error) {
	if _, err := io.ReadFull(f.r, f.hdr[:]); err != nil {
		return nil, err
	}
	n := int(binary.BigEndian.Uint32(f.hdr[:]))
	if n > maxFrame {
		return nil, errFrameTooLarge
	}
	buf = grow(buf, n)
	if _, err := io.ReadFull(f.r, buf); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return buf, nil
}

func (f *protoFrames) pending() bool { return f.r.Buffered() > 0 }

// grow returns buf resized to n bytes, reallocated if too small.
func grow(buf []byte, n int) []byte {
	if cap(buf) < n {
		return make([]byte, n, max(n, 2*cap(buf)))
	}
	return buf[:n]
}

// jsonFrames reads a stream of JSON objects (kube-apiserver writes one per
// line, but nothing here relies on the newlines). It finds where each
// object ends by counting brackets outside strings, resuming where it
// stopped when an object spans reads; the envelope parser and the typed
// decoder validate the frame afterwards.
type jsonFrames struct {
	r          io.Reader
	buf        []byte // buf[start:end] is read and not yet returned
	start, end int

	// scan state of the frame at buf[start:], up to buf[start+pos]
	pos            int
	depth          int
	inStr, escaped bool
}

func (f *jsonFrames) next(out []byte) ([]byte, error) {
	for {
		if n, err := f.scan(); err != nil {
			return nil, err
		} else if n > 0 {
			out = append(out[:0], f.buf[f.start:f.start+n]...)
			f.start += n
			f.pos, f.depth, f.inStr, f.escaped = 0, 0, false, false
			return out, nil
		}
		if f.end-f.start >= maxFrame {
			return nil, errFrameTooLarge
		}
		if err := f.fill(); err != nil {
			if err == io.EOF && f.depth > 0 {
				err = io.ErrUnexpectedEOF
			}
			return nil, err
		}
	}
}

func (f *jsonFrames) pending() bool {
	for _, c := range f.buf[f.start:f.end] {
		if !isSpace(c) {
			return true
		}
	}
	br, ok := f.r.(*bufio.Reader)
	return ok && br.Buffered() > 0
}

// fill reads more input, moving the unreturned bytes to the front or
// growing the buffer first if it is full.
func (f *jsonFrames) fill() error {
	if f.buf == nil {
		f.buf = make([]byte, 32<<10)
	}
	if f.end == len(f.buf) {
		if f.start > 0 {
			f.end = copy(f.buf, f.buf[f.start:f.end])
			f.start = 0
		} else {
			nb := make([]byte, 2*len(f.buf))
			copy(nb, f.buf[:f.end])
			f.buf = nb
		}
	}
	n, err := f.r.Read(f.buf[f.end:])
	f.end += n
	if n > 0 {
		return nil
	}
	if err == nil {
		err = io.ErrNoProgress
	}
	return err
}

// scan continues scanning the frame at buf[start:end]; it returns the
// frame's length once the object is complete, or 0 if more input is
// needed. Spaces between frames are dropped.
func (f *jsonFrames) scan() (int, error) {
	b := f.buf[f.start:f.end]
	i := f.pos
	if f.depth == 0 {
		for i < len(b) && isSpace(b[i]) {
			i++
		}
		f.start += i
		b, i = b[i:], 0
		if len(b) == 0 {
			f.pos = 0
			return 0, nil
		}
		if b[0] != '{' {
			return 0, fmt.Errorf("invalid character %q looking for the beginning of a JSON watch event", b[0])
		}
		f.depth, i = 1, 1
	}
	for ; i < len(b); i++ {
		c := b[i]
		if f.inStr {
			switch {
			case f.escaped:
				f.escaped = false
			case c == '\\':
				f.escaped = true
			case c == '"':
				f.inStr = false
			}
			continue
		}
		switch c {
		case '"':
			f.inStr = true
		case '{', '[':
			f.depth++
		case '}', ']':
			f.depth--
			if f.depth == 0 {
				return i + 1, nil
			}
		}
	}
	f.pos = i
	return 0, nil
}
