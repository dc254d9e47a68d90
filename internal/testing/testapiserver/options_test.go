package testapiserver

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestAPIServerArgs(t *testing.T) {
	tests := []struct {
		name string
		opts Options
		want []string
	}{
		{name: "zero value adds nothing", opts: Options{}, want: nil},
		{name: "watch cache off", opts: Options{DisableWatchCache: true}, want: []string{"--watch-cache=false"}},
		{name: "compaction interval", opts: Options{EtcdCompactionInterval: 2 * time.Second}, want: []string{"--etcd-compaction-interval=2s"}},
		{name: "compaction disabled", opts: Options{EtcdCompactionInterval: -1}, want: []string{"--etcd-compaction-interval=0"}},
		{name: "watchlist on", opts: Options{WatchList: FeatureEnabled}, want: []string{"--feature-gates=WatchList=true"}},
		{name: "watchlist off", opts: Options{WatchList: FeatureDisabled}, want: []string{"--feature-gates=WatchList=false"}},
		{
			name: "everything, extra args last",
			opts: Options{
				DisableWatchCache: true, EtcdCompactionInterval: time.Minute, WatchList: FeatureDisabled,
				ExtraAPIServerArgs: []string{"--v=4"},
			},
			want: []string{"--watch-cache=false", "--etcd-compaction-interval=1m0s", "--feature-gates=WatchList=false", "--v=4"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.opts.APIServerArgs(); !slices.Equal(got, tt.want) {
				t.Errorf("APIServerArgs() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestOptionsValidate(t *testing.T) {
	tests := []struct {
		name    string
		opts    Options
		wantErr string
	}{
		{name: "zero value", opts: Options{}},
		{name: "negative compaction disables", opts: Options{EtcdCompactionInterval: -time.Second}},
		{name: "sub-second compaction", opts: Options{EtcdCompactionInterval: time.Millisecond}, wantErr: "below one second"},
		{name: "unknown feature state", opts: Options{WatchList: FeatureState(7)}, wantErr: "unknown WatchList state 7"},
		{name: "negative timeout", opts: Options{StartTimeout: -time.Second}, wantErr: "negative StartTimeout"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.opts.validate()
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("validate() = %v, want nil", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("validate() = %v, want error containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestFeatureStateString(t *testing.T) {
	got := []string{FeatureDefault.String(), FeatureEnabled.String(), FeatureDisabled.String(), FeatureState(9).String()}
	want := []string{"default", "true", "false", "FeatureState(9)"}
	if !slices.Equal(got, want) {
		t.Errorf("String() = %q, want %q", got, want)
	}
}

func TestStartTimeoutDefault(t *testing.T) {
	if got := (Options{}).startTimeout(); got != 90*time.Second {
		t.Errorf("default startTimeout = %v, want 90s", got)
	}
	if got := (Options{StartTimeout: time.Second}).startTimeout(); got != time.Second {
		t.Errorf("startTimeout = %v, want 1s", got)
	}
}

func TestLostPortRace(t *testing.T) {
	inUse := fmt.Errorf("testapiserver: etcd %w (exit status 1); log tail:\nlisten tcp 127.0.0.1:2379: bind: address already in use", errExitedEarly)
	badFlag := fmt.Errorf("testapiserver: kube-apiserver %w (exit status 1); log tail:\nError: unknown flag: --x", errExitedEarly)
	timeout := errors.New("testapiserver: kube-apiserver not ready after 1s: address already in use")
	for _, tt := range []struct {
		err  error
		want bool
	}{{inUse, true}, {badFlag, false}, {timeout, false}} {
		if got := lostPortRace(tt.err); got != tt.want {
			t.Errorf("lostPortRace(%q) = %v, want %v", tt.err, got, tt.want)
		}
	}
}
