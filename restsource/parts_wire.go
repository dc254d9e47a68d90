package restsource

import (
	"bytes"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/listwatch/listwatch/restsource/internal/jsonwire"
	"github.com/listwatch/listwatch/restsource/internal/wire"
)

// Messages split without decoding them, for decoding in parts (parts.go)
// and for the metadata (metadata.go): a protobuf message into runs of
// fields, read by [wire.Fields], a JSON object into members.

// eachPart splits msg into its fields, in order: each maximal run of
// consecutive length-delimited fields with one number that pick picks goes
// to part (its number and its bytes, tags included), the runs of other
// fields in between to other. A picked number in two runs (never written
// so by a Kubernetes server) makes it stop with errUnsplittable: a shared
// part replaces, where decoding twice would merge.
func eachPart(msg []byte, pick func(protowire.Number) bool, other func([]byte) error, part func(protowire.Number, []byte) error) error {
	var seen fieldSet
	start := 0               // of the current run of other fields
	var run protowire.Number // of the current run of picked fields, or 0
	from := 0                // where it starts
	f := wire.New(msg)
	for {
		ok := f.Next()
		if !ok && f.Err() != nil {
			return errUnsplittable
		}
		if run != 0 && (!ok || f.Num != run || f.Type != protowire.BytesType) {
			to := len(msg)
			if ok {
				to = f.Start()
			}
			if seen.has(run) {
				return errUnsplittable
			}
			seen |= 1 << run
			if start < from {
				if err := other(msg[start:from]); err != nil {
					return err
				}
			}
			if err := part(run, msg[from:to]); err != nil {
				return err
			}
			start, run = to, 0
		}
		if !ok {
			break
		}
		if run == 0 && f.Type == protowire.BytesType && f.Num < 64 && pick(f.Num) {
			run, from = f.Num, f.Start()
		}
	}
	if start < len(msg) {
		return other(msg[start:])
	}
	return nil
}

// eachRun splits msg into its fields: every length-delimited field number
// special is passed to special, and the runs of other fields in between
// to other, all in the order of msg. A field number special of another
// wire type is left in a run, for the generated decoder to reject.
func eachRun(msg []byte, special protowire.Number, other, fn func([]byte) error) error {
	start := 0 // of the current run
	f := wire.New(msg)
	for f.Next() {
		if f.Num != special || f.Type != protowire.BytesType {
			continue
		}
		if start < f.Start() {
			if err := other(msg[start:f.Start()]); err != nil {
				return err
			}
		}
		if err := fn(f.Bytes()); err != nil {
			return err
		}
		start = f.End()
	}
	if f.Err() != nil {
		return errUnsplittable
	}
	if start < len(msg) {
		return other(msg[start:])
	}
	return nil
}

// fieldSet is a set of field numbers below 64, for eachPart's pick.
type fieldSet uint64

func fields(nums ...protowire.Number) fieldSet {
	var s fieldSet
	for _, n := range nums {
		s |= 1 << n
	}
	return s
}

func (s fieldSet) has(n protowire.Number) bool { return s&(1<<n) != 0 }

// single returns the value of a run of one field, or errUnsplittable for
// a run of more (a message given twice, which decoding merges).
func single(run []byte) ([]byte, error) {
	f := wire.New(run)
	if !f.Next() || f.End() != len(run) {
		return nil, errUnsplittable
	}
	return f.Bytes(), nil
}

// runSpan returns the span of the run of length-delimited fields num in
// msg (from == to at the end of msg if there is none); ok is false if msg
// does not split into fields or has fields num outside that one run.
func runSpan(msg []byte, num protowire.Number) (from, to int, ok bool) {
	from, to = -1, -1
	f := wire.New(msg)
	for f.Next() {
		if f.Num != num {
			continue
		}
		switch {
		case f.Type != protowire.BytesType || to >= 0 && to != f.Start():
			return 0, 0, false
		case from < 0:
			from = f.Start()
		}
		to = f.End()
	}
	switch {
	case f.Err() != nil:
		return 0, 0, false
	case from < 0:
		return len(msg), len(msg), true
	}
	return from, to, true
}

// memberCuts is what [cutMembers] found in one object: the picked
// members' numbers and their values' spans, and the spans of the members
// to keep. A partsDecoder keeps one per level of nesting for reuse.
type memberCuts struct {
	nums       []int
	vals, kept [][2]int
}

// cutMembers finds the members of the JSON object obj named in pick
// (values other than null) and sets c to their numbers, their values'
// spans and the spans of the members to keep. ok is false if a key is
// escaped or a picked one given twice.
func cutMembers(obj []byte, pick map[string]int, c *memberCuts) (ok bool) {
	var seen fieldSet
	c.nums, c.vals, c.kept = c.nums[:0], c.vals[:0], c.kept[:0]
	err := jsonwire.EachMember(obj, func(key []byte, keyStart, valStart, valEnd int) error {
		if bytes.IndexByte(key, '\\') >= 0 {
			return errFound
		}
		num, picked := pick[string(key)]
		if !picked || string(obj[valStart:valEnd]) == "null" {
			c.kept = append(c.kept, [2]int{keyStart, valEnd})
			return nil
		}
		if seen.has(protowire.Number(num)) {
			return errFound
		}
		seen |= 1 << num
		c.nums, c.vals = append(c.nums, num), append(c.vals, [2]int{valStart, valEnd})
		return nil
	})
	return err == nil
}
