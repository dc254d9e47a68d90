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
// line, but nothing here relies on the newlines): each is a value of the
// jsonReader, scanned as it arrives; the envelope parser and the typed
// decoder validate the frame afterwards.
type jsonFrames struct{ jsonReader }

func newJSONFrames(r io.Reader) *jsonFrames {
	return &jsonFrames{jsonReader{r: r, max: maxFrame}}
}

func (f *jsonFrames) next(out []byte) ([]byte, error) {
	if c, err := f.peek(); err != nil {
		return nil, err
	} else if c != '{' {
		return nil, fmt.Errorf("invalid character %q looking for the beginning of a JSON watch event", c)
	}
	v, err := f.value()
	if err != nil {
		return nil, err
	}
	return append(out[:0], v...), nil
}

func (f *jsonFrames) pending() bool {
	for _, c := range f.buf[f.pos:] {
		if !jsonwire.IsSpace(c) {
			return true
		}
	}
	br, ok := f.r.(*bufio.Reader)
	return ok && br.Buffered() > 0
}
