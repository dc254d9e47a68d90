package informer

// sourceAs returns src as an I: src itself, or the source it adapts, as
// far down as adapters unwrap (reflector.FromListerWatcher's, which the
// clientgo/ drop-ins and crcache put around every source), so that a
// shard.Source's optional interfaces ([Owner], [CurrentResourceVersioner])
// are found through them.
func sourceAs[I any](src any) (I, bool) {
	for src != nil {
		if i, ok := src.(I); ok {
			return i, true
		}
		u, ok := src.(interface{ Unwrap() any })
		if !ok {
			break
		}
		src = u.Unwrap()
	}
	var zero I
	return zero, false
}
