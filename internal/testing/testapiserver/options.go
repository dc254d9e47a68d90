package testapiserver

import (
	"fmt"
	"strconv"
	"time"
)

// FeatureState is a tri-state switch for an apiserver feature gate.
// The zero value keeps the apiserver's own default.
type FeatureState int

const (
	// FeatureDefault leaves the gate at the apiserver's built-in default.
	FeatureDefault FeatureState = iota
	// FeatureEnabled forces the gate on.
	FeatureEnabled
	// FeatureDisabled forces the gate off.
	FeatureDisabled
)

// String returns "default", "true" or "false".
func (f FeatureState) String() string {
	switch f {
	case FeatureDefault:
		return "default"
	case FeatureEnabled:
		return "true"
	case FeatureDisabled:
		return "false"
	}
	return "FeatureState(" + strconv.Itoa(int(f)) + ")"
}

// Options configures one Start call. The zero value starts an apiserver
// with its defaults (watch cache on, compaction every 5 minutes, WatchList
// at its v1.36 default, which is on).
type Options struct {
	// BinDir holds the kube-apiserver and etcd binaries. Empty means: ask
	// hack/build-apiserver.sh, which builds them on first use and prints
	// the cache directory. The environment variable
	// LISTWATCH_APISERVER_BIN_DIR, if set, is used before the script.
	BinDir string

	// DisableWatchCache passes --watch-cache=false, so every list and watch
	// is served straight from etcd.
	DisableWatchCache bool

	// EtcdCompactionInterval is passed as --etcd-compaction-interval.
	// Zero keeps the apiserver default (5m); a negative value disables
	// compaction (passes 0). Positive values must be at least one second.
	EtcdCompactionInterval time.Duration

	// WatchList sets --feature-gates=WatchList=true|false.
	WatchList FeatureState

	// ExtraAPIServerArgs are appended after every generated flag, so they
	// win over them (the apiserver keeps the last value of a repeated flag).
	ExtraAPIServerArgs []string

	// StartTimeout bounds each wait for etcd and the apiserver to become
	// ready. Zero means 90 seconds.
	StartTimeout time.Duration
}

// validate reports options that can never work.
func (o Options) validate() error {
	if o.EtcdCompactionInterval > 0 && o.EtcdCompactionInterval < time.Second {
		return fmt.Errorf("testapiserver: EtcdCompactionInterval %v is below one second", o.EtcdCompactionInterval)
	}
	switch o.WatchList {
	case FeatureDefault, FeatureEnabled, FeatureDisabled:
	default:
		return fmt.Errorf("testapiserver: unknown WatchList state %d", int(o.WatchList))
	}
	if o.StartTimeout < 0 {
		return fmt.Errorf("testapiserver: negative StartTimeout %v", o.StartTimeout)
	}
	return nil
}

// startTimeout returns the effective readiness timeout.
func (o Options) startTimeout() time.Duration {
	if o.StartTimeout == 0 {
		return 90 * time.Second
	}
	return o.StartTimeout
}

// APIServerArgs returns the kube-apiserver flags that follow from the
// options alone, in a fixed order; Start adds the flags for ports,
// certificates and credentials in front of them.
func (o Options) APIServerArgs() []string {
	var args []string
	if o.DisableWatchCache {
		args = append(args, "--watch-cache=false")
	}
	switch {
	case o.EtcdCompactionInterval < 0:
		args = append(args, "--etcd-compaction-interval=0")
	case o.EtcdCompactionInterval > 0:
		args = append(args, "--etcd-compaction-interval="+o.EtcdCompactionInterval.String())
	}
	if o.WatchList != FeatureDefault {
		args = append(args, "--feature-gates=WatchList="+o.WatchList.String())
	}
	return append(args, o.ExtraAPIServerArgs...)
}
