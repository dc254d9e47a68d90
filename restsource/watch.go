package restsource

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/klog/v2"

	"github.com/listwatch/listwatch/restsource/internal/jsonwire"
)

// eventDecoder decodes one frame into an event.
type eventDecoder func(frame []byte) (watch.Event, error)

// watcher is the watch.Interface of one watch request: a reader goroutine
// splits the stream into frames, decoders turn frames into events (on the
// reader goroutine itself with one worker, else on a pool of workers) and
// an emitter delivers the events in the order of the frames.
type watcher struct {
	result chan watch.Event
	done   chan struct{} // closed on Stop or when the stream ends
	once   sync.Once
	ctx    context.Context    // the caller's: once done, read errors are expected
	cancel context.CancelFunc // of the request
	body   io.Closer
	exited chan struct{} // closed when every goroutine has returned

	logger  klog.Logger
	decoder func(json bool) eventDecoder
	workers int
	// inlined counts the frames the reader of a parallel watch decoded
	// and delivered itself (a trickle); only that goroutine writes it.
	inlined int
}

// ResultChan implements watch.Interface. The channel is closed after the
// stream ends, on an error or on Stop.
func (w *watcher) ResultChan() <-chan watch.Event { return w.result }

// Stop implements watch.Interface: it ends the request and returns once
// every goroutine of the watch has returned. It may be called any number
// of times, from any goroutine.
func (w *watcher) Stop() {
	w.shutdown()
	<-w.exited
}

func (w *watcher) shutdown() {
	w.once.Do(func() {
		close(w.done)
		w.cancel()
		_ = w.body.Close()
	})
}

// streamIsJSON sniffs the stream's encoding from its first byte: a JSON
// object starts with '{' (after spaces), a protobuf frame with the high
// byte of its length, which is 0 below maxFrame.
func streamIsJSON(r *bufio.Reader) (bool, error) {
	for {
		b, err := r.Peek(1)
		if err != nil {
			return false, err
		}
		if !jsonwire.IsSpace(b[0]) {
			return b[0] == '{', nil
		}
		_, _ = r.ReadByte()
	}
}

// reporter turns a stream error into the Status of an ERROR event, the
// same Status client-go's watch reports (500, reason InternalError, cause
// ClientWatchDecoding).
var reporter = apierrors.NewClientErrorReporter(http.StatusInternalServerError, "GET", "ClientWatchDecoding")

func errorEvent(err error) watch.Event {
	return watch.Event{Type: watch.Error, Object: reporter.AsObject(fmt.Errorf("unable to decode an event from the watch stream: %v", err))}
}

// decodeError is a frame that could not be decoded, as opposed to a
// failure to read the stream.
type decodeError struct{ err error }

func (e decodeError) Error() string { return e.err.Error() }

// end reports how the stream ended: a decode error becomes an ERROR event
// (returned, ok), the end of the stream or of the connection is logged.
func (w *watcher) end(err error) (watch.Event, bool) {
	select {
	case <-w.done: // stopped: whatever the read returned is the consequence
		return watch.Event{}, false
	case <-w.ctx.Done():
		return watch.Event{}, false
	default:
	}
	var de decodeError
	switch {
	case errors.As(err, &de):
		return errorEvent(de.err), true
	case errors.Is(err, io.EOF):
		return watch.Event{}, false
	case errors.Is(err, io.ErrUnexpectedEOF):
		w.logger.V(1).Info("Watch stream truncated inside an event", "err", err)
		return watch.Event{}, false
	case utilnet.IsProbableEOF(err) || utilnet.IsTimeout(err):
		w.logger.V(5).Info("Watch stream closed", "err", err)
		return watch.Event{}, false
	}
	return errorEvent(err), true
}

// send delivers ev unless the watch is stopped first.
func (w *watcher) send(ev watch.Event) bool {
	select {
	case w.result <- ev:
		return true
	case <-w.done:
		return false
	}
}

// run is the watch's main goroutine.
func (w *watcher) run(br *bufio.Reader) {
	defer close(w.exited)
	defer close(w.result)
	defer w.shutdown()
	isJSON, err := streamIsJSON(br)
	if err != nil {
		if ev, ok := w.end(err); ok {
			w.send(ev)
		}
		return
	}
	var frames frameReader = &protoFrames{r: br}
	if isJSON {
		frames = newJSONFrames(br)
	}
	decode := w.decoder(isJSON)
	if w.workers <= 1 {
		w.inline(frames, decode)
		return
	}
	w.parallel(frames, decode)
}

// inline reads, decodes and delivers on one goroutine.
func (w *watcher) inline(frames frameReader, decode eventDecoder) {
	var buf []byte
	for {
		frame, err := frames.next(buf)
		if err == nil {
			buf = frame
			var ev watch.Event
			if ev, err = decode(frame); err == nil {
				if !w.send(ev) {
					return
				}
				continue
			}
		}
		if ev, ok := w.end(err); ok {
			w.send(ev)
		}
		return
	}
}

// maxKeptBuffer is the largest frame buffer kept for the next frame.
const maxKeptBuffer = 1 << 20

// slot is one frame in flight in the parallel pipeline.
type slot struct {
	frame []byte // owned buffer, reused
	ev    watch.Event
	err   error         // a decode error, or how the stream ended
	ready chan struct{} // cap 1: ev/err are set
}

// parallel runs the reader (this goroutine), workers decoders and an
// emitter. Slots are used round-robin: the reader fills slot i%n, a worker
// decodes it, and the emitter, which walks the slots in the same order,
// delivers it and frees it, so the order of the frames is kept.
//
// At a trickle the reader decodes and delivers a frame itself, as inline
// does: when no frame is in flight (every slot handed to the workers has
// been delivered) and nothing more of the stream has arrived yet. A steady
// watch then costs no hand-off to a worker and to the emitter; the workers
// take over as soon as a backlog builds (a burst, the initial events of a
// streaming list). The order is kept because the reader goes inline only
// when the emitter has delivered everything before, and the slot it would
// have used stays the next one the emitter waits on.
func (w *watcher) parallel(frames frameReader, decode eventDecoder) {
	n := 4 * w.workers
	slots := make([]slot, n)
	for i := range slots {
		slots[i].ready = make(chan struct{}, 1)
	}
	free := make(chan struct{}, n) // a token per free slot
	for range n {
		free <- struct{}{}
	}
	work := make(chan int, n)
	var delivered atomic.Uint64 // slots the emitter has delivered
	var wg sync.WaitGroup
	for range w.workers {
		wg.Go(func() {
			for i := range work {
				s := &slots[i]
				s.ev, s.err = decode(s.frame)
				if cap(s.frame) > maxKeptBuffer {
					s.frame = nil // do not keep a rare huge frame's buffer
				}
				s.ready <- struct{}{}
			}
		})
	}
	wg.Go(func() { w.emit(slots, free, &delivered) })
	defer wg.Wait()
	defer close(work)
	var (
		dispatched uint64 // slots handed to the workers
		own        []byte // the reader's frame buffer for inline frames
	)
	for i := 0; ; {
		select {
		case <-free:
		case <-w.done:
			return
		}
		s := &slots[i]
		frame, err := frames.next(s.frame)
		if err != nil {
			s.err = err
			s.ready <- struct{}{}
			return
		}
		s.frame = frame
		if dispatched == delivered.Load() && !frames.pending() {
			// A trickle: decode and deliver here. The slot stays free.
			w.inlined++
			s.frame, own = own, frame
			free <- struct{}{}
			ev, err := decode(frame)
			if cap(own) > maxKeptBuffer {
				own = nil
			}
			if err != nil {
				s.err = err // the emitter, waiting on this slot, ends the watch
				s.ready <- struct{}{}
				return
			}
			if !w.send(ev) {
				return
			}
			continue
		}
		dispatched++
		work <- i
		i = (i + 1) % n
	}
}

// emit delivers the decoded events in order; it stops the watch at the
// first error.
func (w *watcher) emit(slots []slot, free chan<- struct{}, delivered *atomic.Uint64) {
	defer w.shutdown()
	for i := 0; ; i = (i + 1) % len(slots) {
		s := &slots[i]
		select {
		case <-s.ready:
		case <-w.done:
			return
		}
		ev, err := s.ev, s.err
		s.ev, s.err = watch.Event{}, nil
		if err != nil {
			if ev, ok := w.end(err); ok {
				w.send(ev)
			}
			return
		}
		free <- struct{}{}
		if !w.send(ev) {
			return
		}
		delivered.Add(1)
	}
}

// newEventDecoder returns the frame decoder of one encoding.
func newEventDecoder(typed interface {
	protobuf(raw []byte, status bool) (runtime.Object, error)
	json(raw []byte, status bool) (runtime.Object, error)
}, isJSON bool) eventDecoder {
	parse, object := parseProtoEvent, typed.protobuf
	if isJSON {
		parse, object = parseJSONEvent, typed.json
	}
	return func(frame []byte) (watch.Event, error) {
		typ, raw, err := parse(frame)
		if err != nil {
			return watch.Event{}, decodeError{err}
		}
		var t watch.EventType
		switch string(typ) { // constants: no string allocated per event
		case string(watch.Added):
			t = watch.Added
		case string(watch.Modified):
			t = watch.Modified
		case string(watch.Deleted):
			t = watch.Deleted
		case string(watch.Bookmark):
			t = watch.Bookmark
		case string(watch.Error):
			t = watch.Error
		default:
			return watch.Event{}, decodeError{fmt.Errorf("got invalid watch event type: %q", typ)}
		}
		obj, err := object(raw, t == watch.Error)
		if err != nil {
			return watch.Event{}, decodeError{fmt.Errorf("%s event: %w", t, err)}
		}
		return watch.Event{Type: t, Object: obj}, nil
	}
}
