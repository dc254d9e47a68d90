package kcm

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// BenchmarkControllerManager runs both builds of kube-controller-manager
// through Run at KCM_SIZE (full: Full, the default; small: Small), each
// in a process of its own against a server of its own, in KCM_ROUNDS
// rounds (default 3) that alternate the order of the builds, and reports
// the medians of each figure and listwatch's ÷ stock's; KCM_OUT names a
// file for the markdown table, KCM_BUILDS the builds to run (default
// both: "stock,listwatch"), KCM_PROFILES a directory for each run's heap
// profiles (Options.Profiles; a subdirectory per round). States are compared as in
// TestControllerManager, each round.
//
//	go test -run '^$' -bench ControllerManager -benchtime 1x -timeout 6h ./test/kcm/
func BenchmarkControllerManager(b *testing.B) {
	size, sizeName := Full, "full"
	if os.Getenv("KCM_SIZE") == "small" {
		size, sizeName = Small, "small"
	}
	rounds := 3
	if v, err := strconv.Atoi(os.Getenv("KCM_ROUNDS")); err == nil && v > 0 {
		rounds = v
	}
	qps := 200
	if v, err := strconv.Atoi(os.Getenv("KCM_QPS")); err == nil && v > 0 {
		qps = v
	}
	bins, err := Binaries(b.Context())
	if err != nil {
		b.Fatal(err)
	}
	results := map[Build][]Result{}
	for round := range rounds {
		order := []Build{Stock, Listwatch}
		if round%2 == 1 {
			slices.Reverse(order)
		}
		if only := os.Getenv("KCM_BUILDS"); only != "" {
			order = slices.DeleteFunc(order, func(b Build) bool { return !strings.Contains(only, string(b)) })
		}
		got := map[Build]Result{}
		for _, build := range order {
			b.Run(fmt.Sprintf("round%d/%s", round, build), func(b *testing.B) {
				opts := Options{Bins: bins, Size: size, QPS: qps, Logf: b.Logf}
				if dir := os.Getenv("KCM_PROFILES"); dir != "" {
					opts.Profiles = filepath.Join(dir, fmt.Sprintf("round%d", round))
					if err := os.MkdirAll(opts.Profiles, 0o755); err != nil {
						b.Fatal(err)
					}
				}
				res, err := Run(b.Context(), b, build, opts)
				if err != nil {
					b.Fatal(err)
				}
				got[build] = res
				results[build] = append(results[build], res)
			})
		}
		if len(got) < 2 {
			continue
		}
		for _, phase := range Phases {
			if d := got[Stock].States[phase].Diff(got[Listwatch].States[phase]); d != nil {
				b.Errorf("round %d, phase %q: the states differ (- stock, + listwatch):\n%s", round, phase, joinLines(d))
			}
		}
		if extra := missingFrom(got[Listwatch].Errors, got[Stock].Errors); len(extra) > 0 {
			b.Logf("round %d: listwatch's log has errors the stock build's has not:\n%s", round, joinLines(extra))
		}
	}
	table := report(results, size, sizeName, rounds, qps)
	b.Log("\n" + table)
	if out := os.Getenv("KCM_OUT"); out != "" {
		if err := os.WriteFile(out, []byte(table), 0o644); err != nil {
			b.Error(err)
		}
	}
}

// figure is one row of the report.
type figure struct {
	name  string
	value func(Result) float64
	unit  string
}

var figures = []figure{
	{"live heap after the sync", func(r Result) float64 { return float64(r.Synced.HeapBytes) / (1 << 20) }, "MiB"},
	{"RSS after the sync", func(r Result) float64 { return float64(r.Synced.RSSBytes) / (1 << 20) }, "MiB"},
	{"CPU to sync", func(r Result) float64 { return r.SyncCPU.Seconds() }, "s"},
	{"time until every workload is available", func(r Result) float64 { return r.Available.Seconds() }, "s"},
	{"live heap at the end of the churn", func(r Result) float64 { return float64(r.End.HeapBytes) / (1 << 20) }, "MiB"},
	{"RSS at the end of the churn", func(r Result) float64 { return float64(r.End.RSSBytes) / (1 << 20) }, "MiB"},
	{"CPU during the churn", func(r Result) float64 { return r.ChurnCPU.Seconds() }, "s"},
	{"garbage collection of a third of the Deployments and every Job", func(r Result) float64 { return r.Collected.Seconds() }, "s"},
	{"deletion of a namespace", func(r Result) float64 { return r.NamespaceGone.Seconds() }, "s"},
	{"requeues because a cache was behind the controller's own write", func(r Result) float64 { return float64(r.Behinds) }, ""},
}

func report(results map[Build][]Result, size Size, sizeName string, rounds, qps int) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "kube-controller-manager v1.37.2, %s size (%d nodes, %d namespaces, %d pods), --kube-api-qps=%d, medians of %d rounds [range]\n\n",
		sizeName, size.Nodes, size.Namespaces, size.Pods(), qps, rounds)
	sb.WriteString("| figure | stock | listwatch | ÷ stock |\n| --- | ---: | ---: | ---: |\n")
	for _, f := range figures {
		s, l := values(results[Stock], f.value), values(results[Listwatch], f.value)
		ms, ml := median(s), median(l)
		fmt.Fprintf(&sb, "| %s | %.1f %s %s | %.1f %s %s | %.2f× |\n", f.name, ms, f.unit, span(s), ml, f.unit, span(l), ml/ms)
	}
	return sb.String()
}

func values(rs []Result, f func(Result) float64) []float64 {
	out := make([]float64, len(rs))
	for i, r := range rs {
		out[i] = f(r)
	}
	slices.Sort(out)
	return out
}

func median(sorted []float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[len(sorted)/2]
}

func span(sorted []float64) string {
	if len(sorted) < 2 {
		return ""
	}
	return fmt.Sprintf("[%.1f–%.1f]", sorted[0], sorted[len(sorted)-1])
}
