package restsource

import (
	"reflect"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The walker of the objects of types that have no walker of their own and
// no generated protobuf decoder (custom resources' Go types, decoded from
// JSON): every string below the object's metadata that the decoder set,
// found by reflection, is interned (the metadata has its own walker).
// Strings in exported fields of structs, behind pointers, in slices,
// arrays and maps (keys and values) are reached; unexported fields and
// interfaces are not; a slice with unused room is copied to one of its
// length. Each type is planned once (planOf): the walk visits
// only the fields that can hold a string. When restsource's JSON codec
// decoded the whole object itself it interned the same strings as it
// went (unmarshalInterned, json_typed.go), and the walk is skipped
// (doneRest); it walks what kjson decoded. Built-in kinds decoded from
// protobuf are not walked: on a Deployment the walk costs 0.6 of its
// decoding (BenchmarkAnyObject; docs/benchmarks/
// real-apiserver-secrets-and-crds.md, issue 37).

// walkPlan is how the walker visits a value of one type.
type walkPlan struct {
	kind   reflect.Kind
	elem   *walkPlan   // pointers, slices, arrays: the element's; maps: the value's (nil: holds no string)
	key    bool        // maps: the key is a string
	fields []fieldWalk // structs: the fields that can hold a string
	// stringMap: the map is a map[string]string (named or not), walked
	// without reflection.
	stringMap bool
}

type fieldWalk struct {
	index int
	plan  *walkPlan
}

// plans caches planOf's results: reflect.Type → *walkPlan (nil: no
// string).
var plans sync.Map

var (
	objectMetaRType = reflect.TypeFor[metav1.ObjectMeta]()
	typeMetaRType   = reflect.TypeFor[metav1.TypeMeta]()
	stringMapRType  = reflect.TypeFor[map[string]string]()
)

// planOf returns the plan of t, or nil if a value of t holds no string
// the walker reaches.
func planOf(t reflect.Type) *walkPlan {
	if p, ok := plans.Load(t); ok {
		return p.(*walkPlan)
	}
	p := makePlan(t, map[reflect.Type]*walkPlan{})
	plans.Store(t, p)
	return p
}

// makePlan plans t; building holds the plans being built (a recursive
// type's plan refers to itself).
func makePlan(t reflect.Type, building map[reflect.Type]*walkPlan) *walkPlan {
	if p, ok := building[t]; ok {
		return p
	}
	p := &walkPlan{kind: t.Kind()}
	building[t] = p
	switch t.Kind() {
	case reflect.String:
		return p
	case reflect.Pointer, reflect.Slice, reflect.Array:
		if p.elem = makePlan(t.Elem(), building); p.elem != nil {
			return p
		}
	case reflect.Map:
		p.key, p.elem = t.Key().Kind() == reflect.String, makePlan(t.Elem(), building)
		p.stringMap = t.ConvertibleTo(stringMapRType) && t.Key().Kind() == reflect.String && t.Elem().Kind() == reflect.String
		if p.key || p.elem != nil {
			return p
		}
	case reflect.Struct:
		if t == typeMetaRType {
			break
		}
		for i := range t.NumField() {
			if f := t.Field(i); f.IsExported() {
				if fp := makePlan(f.Type, building); fp != nil {
					p.fields = append(p.fields, fieldWalk{i, fp})
				}
			}
		}
		if len(p.fields) > 0 {
			return p
		}
	}
	building[t] = nil
	return nil
}

// anyObject interns the strings of obj, a pointer to a struct, but its
// ObjectMeta and TypeMeta (when they are its own fields).
func (in *interning) anyObject(obj any) {
	v := reflect.ValueOf(obj)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return
	}
	p := planOf(v.Type().Elem())
	if p == nil {
		return
	}
	v = v.Elem()
	for _, f := range p.fields {
		if fv := v.Field(f.index); fv.Type() != objectMetaRType {
			in.walk(fv, f.plan)
		}
	}
}

// walk interns the strings of v, a settable value (or one whose strings
// are: a slice's elements, what a pointer points to) as p plans.
func (in *interning) walk(v reflect.Value, p *walkPlan) {
	switch p.kind {
	case reflect.String:
		if s := v.String(); s != "" && len(s) <= MaxInternedLen {
			v.SetString(in.String(s))
		}
	case reflect.Pointer:
		if !v.IsNil() {
			in.walk(v.Elem(), p.elem)
		}
	case reflect.Slice, reflect.Array:
		if p.kind == reflect.Slice && v.Cap() > v.Len() && v.CanSet() {
			// The JSON decoder grows slices by doubling: the cache would
			// keep up to as much again of unused room.
			exact := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
			reflect.Copy(exact, v)
			v.Set(exact)
		}
		for i := range v.Len() {
			in.walk(v.Index(i), p.elem)
		}
	case reflect.Struct:
		for _, f := range p.fields {
			in.walk(v.Field(f.index), f.plan)
		}
	case reflect.Map:
		if v.IsNil() {
			return
		}
		if p.stringMap {
			in.stringMap(v.Convert(stringMapRType).Interface().(map[string]string))
			return
		}
		in.walkMap(v, p)
	}
}

// walkMap interns the string keys of the map v and the strings of its
// values, storing each entry again (map values are not settable in place;
// storing a key again stores the interned key).
func (in *interning) walkMap(v reflect.Value, p *walkPlan) {
	t := v.Type()
	var key, val reflect.Value
	if p.key {
		key = reflect.New(t.Key()).Elem()
	}
	if p.elem != nil {
		val = reflect.New(t.Elem()).Elem()
	}
	it := v.MapRange()
	for it.Next() {
		k, e := it.Key(), it.Value()
		if p.key && k.Len() <= MaxInternedLen {
			key.SetString(in.String(k.String()))
			k = key
		}
		if p.elem != nil {
			val.Set(e)
			in.walk(val, p.elem)
			e = val
		}
		v.SetMapIndex(k, e)
	}
}
