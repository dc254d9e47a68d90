package restsource

import (
	"bytes"
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/listwatch/listwatch/restsource/internal/jsonwire"
	"github.com/listwatch/listwatch/restsource/internal/wire"
)

// The custom fields of parts_kinds.go: lists whose elements are messages
// of their own, and maps whose entries are interned (or shared) one by one.

// Sites of the parts below the declared fields.
var (
	siteContainerBut = newSite() // a container without its volume mounts
	siteDataValue    = newSite() // a ConfigMap's long data value
	siteVolumeSource = newSite() // a volume's source, in JSON (volumeParts has the protobuf's)
)

// volumesOf decodes a run of volumes: all of them shared if another pod's
// are encoded alike, else each volume's source shared, its name the pod's
// (and noted in own if no object had it before: the run is then not
// offered to the table).
func (d *partsDecoder) volumesOf(site partSite, run []byte) ([]corev1.Volume, error) {
	d.own = d.own[:0]
	vols, err := sharePartKeep(d.t, site, partKey{a: run}, func() ([]corev1.Volume, error) {
		vols := make([]corev1.Volume, 0, wire.Count(run))
		err := eachEntry(run, func(v []byte) error {
			vols = append(vols, corev1.Volume{})
			vol := &vols[len(vols)-1]
			if err := volumeParts.proto(d, v, vol); err != nil {
				return err
			}
			var hit bool
			vol.Name, hit = d.in.internHit(vol.Name)
			if !hit && vol.Name != "" {
				d.own = append(d.own, []byte(vol.Name))
			}
			return nil
		})
		return slices.Clip(vols), err
	}, func() bool { return len(d.own) == 0 })
	if err != nil {
		return nil, err
	}
	d.noteVolumes(vols)
	return vols, nil
}

// volumesJSON decodes the JSON array of volumes v as volumesOf decodes
// their protobuf: all of them shared if another pod's are encoded alike,
// else each volume's source shared, its name the pod's.
func (d *partsDecoder) volumesJSON(site partSite, v []byte) ([]corev1.Volume, error) {
	d.own = d.own[:0]
	vols, err := sharePartKeep(d.t, jsonSite(site), partKey{a: v}, func() ([]corev1.Volume, error) {
		elems, err := jsonwire.AppendElements(nil, v)
		if err != nil {
			return nil, err
		}
		vols := make([]corev1.Volume, len(elems))
		for i, e := range elems {
			if err := d.volumeJSON(e, &vols[i]); err != nil {
				return nil, err
			}
		}
		return vols, nil
	}, func() bool { return len(d.own) == 0 })
	if err != nil {
		return nil, err
	}
	d.noteVolumes(vols)
	return vols, nil
}

// volumeNameMember picks a volume's name out of its JSON object; the
// members left are its source (inline in JSON).
var volumeNameMember = map[string]int{"name": 1}

// volumeJSON decodes the JSON object of one volume e into vol: its source
// shared with every volume whose source is encoded alike, its name
// interned (and noted in own if no object had it before).
func (d *partsDecoder) volumeJSON(e []byte, vol *corev1.Volume) error {
	c := d.takeCuts()
	defer d.putCuts(c)
	if !cutMembers(e, volumeNameMember, c) {
		return errUnsplittable
	}
	if len(c.nums) == 1 {
		b, err := jsonString(e[c.vals[0][0]:c.vals[0][1]])
		if err != nil {
			return errUnsplittable
		}
		name, hit, counted := d.in.lookupBytes(b)
		d.in.count(hit, counted)
		if !hit && name != "" {
			d.own = append(d.own, b)
		}
		vol.Name = name
	}
	// d.scratch is free: the pod spec's own members were decoded from it
	// before its parts (message.json).
	d.scratch = jsonwire.AppendKept(d.scratch[:0], e, c.kept)
	src, err := sharedJSON(d, siteVolumeSource, d.scratch, interned((*interning).volumeSource))
	vol.VolumeSource = src
	return err
}

// noteVolumes keeps the pod's volume names, for its mounts.
func (d *partsDecoder) noteVolumes(vols []corev1.Volume) {
	d.volumes = d.volumes[:0]
	for i := range vols {
		d.volumes = append(d.volumes, vols[i].Name)
	}
}

// containersOf decodes a run of containers: all shared if another pod's
// are encoded alike, else each container shared but for its volume
// mounts (which name the pod's own service-account token volume), else
// each with its parts shared.
func (d *partsDecoder) containersOf(site partSite, run []byte) ([]corev1.Container, error) {
	decode := func(run []byte) ([]corev1.Container, error) {
		cs := make([]corev1.Container, 0, wire.Count(run))
		err := eachEntry(run, func(v []byte) error {
			cs = append(cs, corev1.Container{})
			return d.containerBut(v, &cs[len(cs)-1])
		})
		return cs, err
	}
	if d.mine(run) {
		return decode(run)
	}
	return sharePart(d.t, site, run, decode)
}

// containerBut decodes the container msg into c: the container but for
// its volume mounts shared with every container encoded alike, the mounts
// after.
func (d *partsDecoder) containerBut(msg []byte, c *corev1.Container) error {
	const mounts = 9
	from, to, ok := runSpan(msg, mounts)
	if !ok {
		return containerParts.proto(d, msg, c)
	}
	shared, err := sharePartKeep(d.t, siteContainerBut, partKey{a: msg[:from], b: msg[to:]}, func() (corev1.Container, error) {
		var c corev1.Container
		err := containerParts.proto(d, append(msg[:from:from], msg[to:]...), &c)
		return c, err
	}, nil)
	if err != nil {
		return err
	}
	*c = shared
	if from == to {
		return nil
	}
	return containerParts.field(mounts).proto(d, msg[from:to], c)
}

// containersJSON decodes the JSON array of containers v: all shared if
// another pod's are encoded alike, else each with its parts shared.
func (d *partsDecoder) containersJSON(site partSite, v []byte) ([]corev1.Container, error) {
	return sharePart(d.t, jsonSite(site), v, func(v []byte) ([]corev1.Container, error) {
		return jsonElements(d, containerParts, v)
	})
}

// statusesOf decodes a run of container statuses, each with its parts
// shared.
func (d *partsDecoder) statusesOf(_ partSite, run []byte) ([]corev1.ContainerStatus, error) {
	cs := make([]corev1.ContainerStatus, 0, wire.Count(run))
	err := eachEntry(run, func(v []byte) error {
		cs = append(cs, corev1.ContainerStatus{})
		return containerStatusParts.proto(d, v, &cs[len(cs)-1])
	})
	return cs, err
}

// statusesJSON decodes the JSON array of container statuses v, each with
// its parts shared.
func (d *partsDecoder) statusesJSON(_ partSite, v []byte) ([]corev1.ContainerStatus, error) {
	return jsonElements(d, containerStatusParts, v)
}

// jsonElements decodes each element of the JSON array v as m declares.
func jsonElements[P any, PP ptrUnmarshaler[P]](d *partsDecoder, m *message[P, PP], v []byte) ([]P, error) {
	elems, err := jsonwire.AppendElements(nil, v)
	if err != nil {
		return nil, err
	}
	out := make([]P, len(elems))
	for i, e := range elems {
		if err := m.json(d, e, &out[i]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// eachEntry calls fn with the value of each entry of a run of one
// length-delimited field.
func eachEntry(run []byte, fn func(v []byte) error) error {
	f := wire.New(run)
	for f.Next() {
		if err := fn(f.Bytes()); err != nil {
			return err
		}
	}
	if f.Err() != nil {
		return errUnsplittable
	}
	return nil
}

// sharedStringMap decodes a run of map<string, string> entries, shared
// whole, interned.
func sharedStringMap(d *partsDecoder, site partSite, run []byte) (map[string]string, error) {
	return sharePart(d.t, site, run, func(run []byte) (map[string]string, error) { return d.entries(run, false) })
}

// sharedStringMapJSON decodes the JSON object of strings v, shared whole,
// interned.
func sharedStringMapJSON(d *partsDecoder, site partSite, v []byte) (map[string]string, error) {
	return sharedJSON(d, site, v, interned((*interning).stringMap))
}

// dataOf decodes a ConfigMap's data (a run of map<string, string>
// entries): shared whole, else keys and short values interned, long
// values shared entry by entry.
func (d *partsDecoder) dataOf(site partSite, run []byte) (map[string]string, error) {
	return sharePart(d.t, site, run, func(run []byte) (map[string]string, error) { return d.entries(run, true) })
}

// entries decodes a run of map<string, string> entries: keys and values
// interned, but with shareLong values too long to intern shared entry by
// entry.
func (d *partsDecoder) entries(run []byte, shareLong bool) (map[string]string, error) {
	m := map[string]string{}
	f := wire.New(run)
	for f.Next() {
		if v := f.Bytes(); !shareLong || len(v) <= MaxInternedLen+8 {
			k, val, err := stringMapEntry(f.Rest(), len(v), d.in)
			if err != nil {
				return nil, err
			}
			m[k] = val
		} else {
			kv, err := sharePart(d.t, siteDataValue, run[f.Start():f.End()], func(entry []byte) ([2]string, error) {
				var cm corev1.ConfigMap
				if err := cm.Unmarshal(entry); err != nil {
					return [2]string{}, err
				}
				for k, v := range cm.Data {
					return [2]string{d.in.String(k), v}, nil
				}
				return [2]string{}, errUnsplittable
			})
			if err != nil {
				return nil, err
			}
			m[kv[0]] = kv[1]
		}
	}
	if f.Err() != nil {
		return nil, errUnsplittable
	}
	return m, nil
}

// dataJSON decodes a ConfigMap's data from the JSON object v as dataOf
// does.
func (d *partsDecoder) dataJSON(site partSite, v []byte) (map[string]string, error) {
	return sharePart(d.t, jsonSite(site), v, func(v []byte) (map[string]string, error) {
		m := map[string]string{}
		err := eachMember(v, func(key, val []byte) error {
			if bytes.IndexByte(key, '\\') >= 0 || len(val) == 0 || val[0] != '"' {
				return errUnsplittable
			}
			if len(val) <= MaxInternedLen+2 {
				s, ok := jsonInternedString(val, d.in)
				if !ok {
					return errUnsplittable
				}
				m[d.in.bytes(key)] = s
				return nil
			}
			s, err := sharePart(d.t, jsonSite(siteDataValue), val, func(val []byte) (string, error) {
				b, _, err := jsonwire.Unquote(val)
				if err != nil {
					return "", errUnsplittable
				}
				return string(b), nil
			})
			m[d.in.bytes(key)] = s
			return err
		})
		return m, err
	})
}
