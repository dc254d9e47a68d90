package restsource

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/listwatch/listwatch/restsource/internal/jsonwire"
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
// line, but nothing here relies on the newlines). A [jsonwire.Scanner]
// finds where each object ends, resuming where it stopped when an object
// spans reads; the envelope parser and the typed decoder validate the
// frame afterwards.
type jsonFrames struct {
	r          io.Reader
	buf        []byte // buf[start:end] is read and not yet returned
	start, end int

	// the frame at buf[start:] is scanned up to buf[start+pos]
	pos  int
	scan jsonwire.Scanner
}

func (f *jsonFrames) next(out []byte) ([]byte, error) {
	for {
		if n, err := f.frame(); err != nil {
			return nil, err
		} else if n > 0 {
			out = append(out[:0], f.buf[f.start:f.start+n]...)
			f.start += n
			f.pos = 0
			return out, nil
		}
		if f.end-f.start >= maxFrame {
			return nil, errFrameTooLarge
		}
		if err := f.fill(); err != nil {
			if err == io.EOF && f.pos > 0 {
				err = io.ErrUnexpectedEOF
			}
			return nil, err
		}
	}
}

func (f *jsonFrames) pending() bool {
	for _, c := range f.buf[f.start:f.end] {
		if !jsonwire.IsSpace(c) {
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

// frame continues scanning the frame at buf[start:end]; it returns the
// frame's length once the object is complete, or 0 if more input is
// needed. Spaces between frames are dropped.
func (f *jsonFrames) frame() (int, error) {
	b := f.buf[f.start:f.end]
	if f.pos == 0 {
		i := jsonwire.SkipSpace(b, 0)
		f.start += i
		if b = b[i:]; len(b) == 0 {
			return 0, nil
		}
		if b[0] != '{' {
			return 0, fmt.Errorf("invalid character %q looking for the beginning of a JSON watch event", b[0])
		}
	}
	n, err := f.scan.Scan(b[f.pos:])
	switch {
	case err != nil:
		return 0, fmt.Errorf("malformed JSON watch event: %w", err)
	case n < 0:
		f.pos = len(b)
		return 0, nil
	}
	return f.pos + n, nil
}
