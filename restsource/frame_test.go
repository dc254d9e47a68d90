package restsource

import (
	"bytes"
	"encoding/json"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
)

// chunks reads data in pieces of random length, one to max bytes.
type chunks struct {
	data []byte
	r    *rand.Rand
	max  int
}

func (c *chunks) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	n := min(len(p), len(c.data), 1+c.r.IntN(c.max))
	copy(p, c.data[:n])
	c.data = c.data[n:]
	return n, nil
}

// TestJSONFramesSplitAnywhere: frames whose strings hold quotes,
// backslashes, brackets and long runs come out whole and in order
// however the stream is cut into reads.
func TestJSONFramesSplitAnywhere(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	pieces := []string{`"`, `\`, `{`, `}`, `[`, `]`, `\"`, `\\`, "é", "\n", "\x01", "abcdefghijklmnop", strings.Repeat("x", 40)}
	var want [][]byte
	var stream bytes.Buffer
	for range 300 {
		var s strings.Builder
		for range r.IntN(30) {
			s.WriteString(pieces[r.IntN(len(pieces))])
		}
		frame, err := json.Marshal(map[string]any{"type": "ADDED", "object": map[string]any{"s": s.String(), "l": []any{s.String(), map[string]any{"k": s.String()}}}})
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, frame)
		stream.Write(frame)
		stream.WriteString(strings.Repeat(" \n", r.IntN(3)))
	}
	for _, max := range []int{1, 7, 64, 4096} {
		f := newJSONFrames(&chunks{data: stream.Bytes(), r: r, max: max})
		var buf []byte
		for i, w := range want {
			got, err := f.next(buf)
			if err != nil || !bytes.Equal(got, w) {
				t.Fatalf("reads of up to %d bytes, frame %d: %q (%v), want %q", max, i, got, err, w)
			}
			buf = got
		}
		if got, err := f.next(buf); err != io.EOF {
			t.Fatalf("reads of up to %d bytes: after the frames %q, %v", max, got, err)
		}
	}
}
