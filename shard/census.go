package shard

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// Census counts objs per owner under a, hashing field (FieldUID when
// empty): every member of a appears, with 0 if it owns none of objs;
// objects of an empty ring count under "". Over an informer's cache it
// tells how the replica's objects spread over the ring (all its own once
// its relists are done; others' while a handover is in progress); over a
// full list, the ring's balance in objects rather than slices.
func Census[T metav1.Object](objs []T, a *Assignment, field Field) (map[string]int, error) {
	if err := field.check(); err != nil {
		return nil, err
	}
	f := field.orDefault()
	out := make(map[string]int, len(a.members))
	for _, m := range a.members {
		out[m] = 0
	}
	for _, o := range objs {
		out[a.OwnerOfKey(f.Value(o))]++
	}
	return out, nil
}

// SliceCensus counts objs per slice of n (the hash space cut as by
// Options.Slices), hashing field: the objects per shard slice, to spot a
// hot slice. It fails on an invalid n or field.
func SliceCensus[T metav1.Object](objs []T, n int, field Field) ([]int, error) {
	n, err := checkSlices(n)
	if err != nil {
		return nil, err
	}
	if err := field.check(); err != nil {
		return nil, err
	}
	f := field.orDefault()
	out := make([]int, n)
	for _, o := range objs {
		out[sliceOf(Hash(f.Value(o)), n)]++
	}
	return out, nil
}
