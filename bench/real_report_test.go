package bench

import (
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"
)

// realFigures are the medians of one row.
type realFigures struct {
	bytesPerObj, peakMB, cpuMS, syncMS float64
	cpuMin, cpuMax                     float64
	stats                              map[string]float64
	lists, watches                     int64
}

func medianOf(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func (r *realRow) figures() realFigures {
	var f realFigures
	var live, peak, cpu, wall []float64
	for _, res := range append(slices.Clone(r.cpu), r.peak...) {
		live = append(live, float64(res.LiveBytes)/float64(r.n))
	}
	for _, res := range r.peak {
		peak = append(peak, float64(res.PeakBytes)/(1<<20))
	}
	for _, res := range r.cpu {
		cpu = append(cpu, float64(res.CPU)/float64(time.Millisecond))
		wall = append(wall, float64(res.Wall)/float64(time.Millisecond))
	}
	f.bytesPerObj, f.peakMB, f.cpuMS, f.syncMS = medianOf(live), medianOf(peak), medianOf(cpu), medianOf(wall)
	if len(cpu) > 0 {
		f.cpuMin, f.cpuMax = slices.Min(cpu), slices.Max(cpu)
	}
	all := append(slices.Clone(r.cpu), r.peak...)
	if len(all) > 0 {
		f.stats = all[len(all)-1].Stats
		f.lists, f.watches = all[len(all)-1].Lists, all[len(all)-1].Watches
	}
	return f
}

// reportReal reports every row as a sub-benchmark (benchstat can read
// them) and logs a table, also written to BENCH_REAL_OUT if set.
func reportReal(b *testing.B, rows []realRow) {
	figs := make(map[string]realFigures, len(rows))
	for i := range rows {
		figs[rows[i].name()] = rows[i].figures()
	}
	var tbl strings.Builder
	tbl.WriteString("| kind | encoding | list | subject | B/obj | ÷ base | peak MiB | ÷ base | CPU ms [range] | ÷ base | sync ms | requests (list/watch) | notes |\n")
	tbl.WriteString("| --- | --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |\n")
	for i := range rows {
		r := &rows[i]
		f := figs[r.name()]
		var base *realFigures
		if bl := realSubjects[r.subject].baseline; bl != "" {
			if bf, ok := figs[strings.TrimSuffix(r.name(), r.subject)+bl]; ok {
				base = &bf
			}
		}
		ratio := func(x, y float64) string {
			if base == nil || y == 0 {
				return ""
			}
			return fmt.Sprintf("%.2f×", x/y)
		}
		b.Run(r.name(), func(b *testing.B) {
			b.ReportMetric(f.bytesPerObj, "B/obj")
			b.ReportMetric(f.peakMB, "peak-MB")
			b.ReportMetric(f.cpuMS, "cpu-ms")
			b.ReportMetric(f.syncMS, "sync-ms")
			if base != nil {
				b.ReportMetric(f.bytesPerObj/base.bytesPerObj, "x-B/obj")
				if base.peakMB > 0 {
					b.ReportMetric(f.peakMB/base.peakMB, "x-peak")
				}
				if base.cpuMS > 0 {
					b.ReportMetric(f.cpuMS/base.cpuMS, "x-cpu")
				}
			}
		})
		var notes []string
		keys := make([]string, 0, len(f.stats))
		for k := range f.stats {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			notes = append(notes, fmt.Sprintf("%s %.4g", k, f.stats[k]))
		}
		list := "stream"
		if r.paged {
			list = "paged"
		}
		var bb, bp, bc float64
		if base != nil {
			bb, bp, bc = base.bytesPerObj, base.peakMB, base.cpuMS
		}
		fmt.Fprintf(&tbl, "| %s | %s | %s | %s | %.0f | %s | %.1f | %s | %.0f [%.0f–%.0f] | %s | %.0f | %d/%d | %s |\n",
			r.kind, r.encoding, list, r.subject, f.bytesPerObj, ratio(f.bytesPerObj, bb), f.peakMB, ratio(f.peakMB, bp),
			f.cpuMS, f.cpuMin, f.cpuMax, ratio(f.cpuMS, bc), f.syncMS, f.lists, f.watches, strings.Join(notes, ", "))
	}
	b.Logf("medians of %d rounds, %d objects:\n%s", max(len(rows[0].cpu), len(rows[0].peak)), rows[0].n, tbl.String())
	if out := os.Getenv("BENCH_REAL_OUT"); out != "" {
		if err := os.WriteFile(out, []byte(tbl.String()), 0o644); err != nil {
			b.Error(err)
		}
	}
}
