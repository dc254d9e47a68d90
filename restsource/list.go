package restsource

import (
	"bytes"
	"errors"
	"fmt"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kjson "sigs.k8s.io/json"
)

// decodeList decodes a list response, sniffing its encoding: protobuf
// starts with the magic, JSON with '{'.
func (s *source[T]) decodeList(body []byte) (runtime.Object, error) {
	if bytes.HasPrefix(body, protoMagic) {
		return s.protobufList(body)
	}
	return s.jsonList(body)
}

func (s *source[T]) protobufList(body []byte) (runtime.Object, error) {
	d := s.dec
	u, err := parseUnknown(body)
	if err != nil {
		return nil, err
	}
	u.kind, u.apiVersion = d.listTypeMeta(u.kind, u.apiVersion)
	switch {
	case string(u.kind) == "Status" && string(u.apiVersion) == statusAPIVersion:
		st := &metav1.Status{}
		if err := st.Unmarshal(u.raw); err != nil {
			return nil, fmt.Errorf("decoding a Status: %w", err)
		}
		return nil, statusError(st)
	case !d.listKindOK(u.kind, u.apiVersion):
		return nil, fmt.Errorf("expected %s %s, got %s", d.apiVersion, d.listKind, u.describe())
	}
	if !d.fast {
		return s.schemeList(body)
	}
	meta, raws, err := parseProtoList(u.raw)
	if err != nil {
		return nil, err
	}
	list := &metav1.List{}
	if err := list.ListMeta.Unmarshal(meta); err != nil {
		return nil, fmt.Errorf("decoding the list's metadata: %w", err)
	}
	list.Items, err = s.decodeItems(raws, 0, func(raw []byte) (T, error) { return d.message(raw, nil) })
	if err != nil {
		return nil, err
	}
	return list, nil
}

func (s *source[T]) jsonList(body []byte) (runtime.Object, error) {
	d := s.dec
	l, err := parseJSONList(body)
	if err != nil {
		return nil, err
	}
	list, err := d.jsonListHead(&l, body)
	if err != nil {
		return nil, err
	}
	if list.Items, err = s.decodeItems(l.items, 0, d.jsonItem); err != nil {
		return nil, err
	}
	d.setItemKinds(list.Items, l.kind)
	return list, nil
}

// jsonListHead checks the kind of the JSON list l, parsed from body (the
// whole list, or its members but items), and decodes its metadata into a
// list without items; a Status is the error it stands for.
func (d *objectDecoder[T]) jsonListHead(l *jsonList, body []byte) (*metav1.List, error) {
	l.kind, l.apiVersion = d.listTypeMeta(l.kind, l.apiVersion)
	switch {
	case len(l.kind) == 0:
		return nil, fmt.Errorf("object 'Kind' is missing in %s", truncate(body))
	case string(l.kind) == "Status" && string(l.apiVersion) == statusAPIVersion:
		st := &metav1.Status{}
		if err := kjson.UnmarshalCaseSensitivePreserveInts(body, st); err != nil {
			return nil, fmt.Errorf("decoding a Status: %w", err)
		}
		st.TypeMeta = metav1.TypeMeta{}
		return nil, statusError(st)
	case !d.listKindOK(l.kind, l.apiVersion):
		return nil, fmt.Errorf("expected %s %s, got %s %s", d.apiVersion, d.listKind, l.apiVersion, l.kind)
	}
	list := &metav1.List{}
	if l.metadata != nil {
		if err := kjson.UnmarshalCaseSensitivePreserveInts(l.metadata, &list.ListMeta); err != nil {
			return nil, fmt.Errorf("decoding the list's metadata: %w", err)
		}
	}
	return list, nil
}

// schemeList decodes a whole protobuf list through the scheme, for types
// without a generated Unmarshal method.
func (s *source[T]) schemeList(body []byte) (runtime.Object, error) {
	obj, _, err := s.dec.codec.Decode(body, nil, nil)
	if err != nil {
		return nil, err
	}
	obj.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
	return obj, nil
}

// statusError returns the error a failed Status stands for, as client-go's
// Result.Into does for a Status in a successful response.
func statusError(st *metav1.Status) error {
	if st.Status == metav1.StatusSuccess {
		return errors.New("the server returned a Status instead of a list")
	}
	return apierrors.FromObject(st)
}

// minItemsPerWorker keeps small lists on the calling goroutine.
const minItemsPerWorker = 16

// decodeItems decodes the items of a list (the first of raws being item
// base) on up to DecodeWorkers goroutines, each into its own allocation.
func (s *source[T]) decodeItems(raws [][]byte, base int, decode func([]byte) (T, error)) ([]runtime.RawExtension, error) {
	items := make([]runtime.RawExtension, len(raws))
	one := func(from, to int) error {
		for i := from; i < to; i++ {
			obj, err := decode(raws[i])
			if err != nil {
				return fmt.Errorf("item %d: %w", base+i, err)
			}
			items[i].Object = obj
		}
		return nil
	}
	workers := min(s.opts.DecodeWorkers, len(raws)/minItemsPerWorker)
	if workers <= 1 {
		if err := one(0, len(raws)); err != nil {
			return nil, err
		}
		return items, nil
	}
	errs := make([]error, workers)
	var wg sync.WaitGroup
	per := (len(raws) + workers - 1) / workers
	for w := range workers {
		wg.Go(func() { errs[w] = one(w*per, min(len(raws), (w+1)*per)) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return items, nil
}
