// Package bench holds side-by-side benchmarks of listwatch against
// client-go's tools/cache and util/workqueue. It has no library code: every
// benchmark lives in a _test.go file and runs both libraries on the same
// pre-built input in the same process, as BenchmarkX/listwatch and
// BenchmarkX/client-go.
//
// # Usage
//
// Run everything, with benchstat and the summary written to
// docs/benchmarks/make-bench.md:
//
//	make bench                  # or: hack/bench.sh
//	BENCH_COUNT=3 hack/bench.sh # quick mode
//
// Or one scenario by hand:
//
//	GOMAXPROCS=2 GOGC=100 go test -run '^$' -bench 'SteadyState' -count 10 ./bench/
//
// The scenarios (see docs/benchmarks/make-bench.md for the last run and
// docs/benchmarks/scenarios.md for the targets):
// BenchmarkSteadyState (pre-decoded events through the whole informer),
// BenchmarkWatchDecode (an httptest apiserver streaming pre-encoded JSON or
// protobuf watch frames to real REST clients), BenchmarkInitialSync (100k
// pods, paged and streaming lists), BenchmarkRelist (a 410 then a relist of
// 100k pods; listwatch also with AtomicRelists), BenchmarkScale (the scale
// curve: 10k to 1M ConfigMaps and pods, time to synced, live and peak
// heap during sync and relist), BenchmarkReadsDuringWrites (the bare store),
// BenchmarkInformerReadsDuringWrites (the whole informer, typed and
// drop-in, with 1/10/40 readers), BenchmarkMemory (live heap per cached pod
// and CPU per event with restsource's memory options, projections and
// metadata-only), BenchmarkFanout, BenchmarkWorkqueue and
// BenchmarkAddAfter, and, with the e2e build tag,
// BenchmarkAPIServerLatency against a real kube-apiserver.
//
// BenchmarkRealMemory (real_test.go) is the memory claim: it fills a real
// kube-apiserver with objects written the way a cluster writes them and
// measures each subject (real_subjects_test.go; doors register their own)
// syncing them in a child process of its own: bytes per cached object,
// peak live heap during the sync, CPU and time to sync. BenchmarkMemory's
// synthetic corpus stays as a fast regression check.
//
// Besides ns/op every benchmark reports CPU time per unit of work (process
// user+sys time from getrusage, which counts every pipeline stage and the
// garbage collector, where wall time would hide overlapped stages), and
// allocations and bytes per unit. Memory figures are live heap after a
// forced collection, or the peak of the heap sampled during the operation.
//
// # Concurrency
//
// Each benchmark starts its informers or queues itself and stops them (and
// waits for their goroutines) before it returns; the two libraries never run
// at the same time, except in BenchmarkAPIServerLatency where both watch the
// same server on purpose.
//
// # Testing
//
// The package has no timed tests: its only test checks that the pod corpus
// has the intended size, so go test ./bench/ (and make test) stays fast. The
// benchmarks themselves check their results (event counts, deduplicated item
// counts, cache contents) and fail on a mismatch.
package bench
