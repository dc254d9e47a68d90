// Package factoryopts lets the drop-in informer factories take client-go's
// functional options (informers.SharedInformerOption,
// metadatainformer.SharedInformerOption) and know what they set.
//
// client-go's option types are functions over its own unexported factory
// structs: func(*sharedInformerFactory) *sharedInformerFactory. Nobody else
// can name that type, read what an option set, or build a factory of it but
// through client-go's constructor. Go's type inference can still write a
// function of that type: [Option] wraps client-go's own option (base) in a
// closure that also records, into a settings struct S, what it sets. The
// closure applies base first, so it is a faithful client-go option too:
// given to client-go's factory, it behaves as base does.
//
// A drop-in constructor builds client-go's factory without options (the only
// way to get a value of the parameter type), then applies the caller's
// options to it with [Apply], which tells the options built by Option which
// settings struct to record into. An option Apply does not recognise (one
// from client-go's package, or written by hand) is applied too, but its
// settings stay unknown: Apply reports it, and the drop-in then hands back
// client-go's factory, which has had every option applied in order and is
// exactly the factory client-go's constructor would have returned.
//
// # Concurrency
//
// Option and Apply are safe for concurrent use: each Apply records only into
// its own settings.
//
// # Testing
//
// The tests apply recorded and foreign options to a stand-in of client-go's
// factory type and check what is recorded, what each option did to the
// factory and in which order.
package factoryopts

import "sync"

// recording maps a factory being configured by Apply to its recorder.
var recording sync.Map // any(factory) -> *recorder

// recorder collects what the options applied to one factory record.
type recorder struct {
	settings any  // *S
	hit      bool // the option just applied recorded
}

// Option returns an option of client-go's type O that applies base (when
// not nil) and then, when applied by Apply with settings of type *S,
// calls record on them. P is client-go's factory pointer type, inferred
// from O.
func Option[O ~func(P) P, P comparable, S any](base O, record func(*S)) O {
	return func(f P) P {
		key := any(f)
		if base != nil {
			f = base(f)
		}
		if r, ok := recording.Load(key); ok {
			rec := r.(*recorder)
			if s, ok := rec.settings.(*S); ok {
				record(s)
				rec.hit = true
			}
		}
		return f
	}
}

// Apply applies opts in order to factory, which must hold a P (client-go's
// constructor's result), as client-go's constructor does: each option's
// result is the factory given to the next. Options built by Option record
// into settings. It returns the final factory, and whether every option was
// one of Option's (when not, settings lack what the others set).
func Apply[O ~func(P) P, P comparable, S any](factory any, opts []O, settings *S) (P, bool) {
	f := factory.(P)
	known := true
	for _, opt := range opts {
		if opt == nil {
			continue
		}
		rec := &recorder{settings: settings}
		key := any(f)
		recording.Store(key, rec)
		f = opt(f)
		recording.Delete(key)
		if !rec.hit {
			known = false
		}
	}
	return f, known
}
