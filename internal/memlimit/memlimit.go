// Package memlimit sets a long-running process's soft memory limit from
// what it keeps live (docs/ARCHITECTURE.md §6, the controller's memory).
package memlimit

import (
	"os"
	"runtime/debug"
	"runtime/metrics"
)

// Bounds of the soft memory limit Bound sets.
const (
	// Min is the least limit set: below it the collector's work is not
	// worth the memory it saves.
	Min = 64 << 20
	// memoryOverhead is what the runtime holds beside the heap (stacks,
	// its own structures), counted by the limit.
	memoryOverhead = 8 << 20
	// PerIssue is about what a controller keeps live per issue while a
	// tick works on every one (70 MiB at 10,000 issues, bench/controller):
	// the first tick's limit comes from the number of issues, before
	// anything was collected to learn it.
	PerIssue = 7 << 10
)

// Bound sets the process's soft memory limit to a quarter above
// the heap still live after the last collection, or above what a tick
// over n issues keeps live if that is more, plus the runtime's own, and
// at least Min; unless GOMEMLIMIT says what it is. A tick
// with every issue due allocates about 200 KiB per issue, nearly all of
// it garbage at once, and the collector's default lets the heap double
// its live size between collections: at 10,000 issues a live heap of
// 70 MiB peaked at 160 MiB of the host's memory, and peaks at 106 MiB
// with this limit. An eighth above peaked at 94 MiB, but made a long
// run's ticks with every issue due a third slower, collecting all the
// time (bench/README.md).
// The limit is set at each tick, once the issues are listed, so a store
// that grows raises it, and the collector is not held under a limit the
// live heap needs.
func Bound(n int) {
	if os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return
	}
	live := max(int64(s[0].Value.Uint64()), int64(n)*PerIssue)
	debug.SetMemoryLimit(max(Min, live+live/4+memoryOverhead))
}
