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
	// PerIssue is what a controller keeps live per issue while a tick
	// works on every one, and a fifth more: the most the heap held live
	// after a collection in such a tick was 44.8–47.8 MiB at 10,000
	// issues, at most 4.9 KiB an issue (bench/controller, "live at
	// most"), once the PR batch let go of each part's PRs
	// (bench/README.md). A tick's limit comes from it whenever less is
	// live at its start: the first tick, before anything was collected
	// to learn what is live, and any whose store's issues are most of
	// the heap between ticks; so the peak of such a tick follows it.
	PerIssue = 6 << 10
)

// Bound sets the process's soft memory limit to a quarter above
// the heap still live after the last collection, or above what a tick
// over n issues keeps live if that is more, plus the runtime's own, and
// at least Min; unless GOMEMLIMIT says what it is. A tick with every
// issue due allocates about 150 KiB per issue, nearly all of it garbage
// at once, and the collector's default lets the heap double its live
// size between collections: at 10,000 issues a live heap of 70 MiB
// peaked at 160 MiB of the host's memory, 106 MiB with this limit at
// 7 KiB an issue, and 94–97 MiB at 6 KiB, the PR batch let go part by
// part, for a tenth more collections. An eighth above peaked at 94 MiB,
// but made a long run's ticks with every issue due a third slower,
// collecting all the time (bench/README.md).
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
