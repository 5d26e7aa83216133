// Package parallel runs the independent steps of a loop on every CPU: the
// reads and the rows of thousands of issues, whose order the caller keeps
// by index.
package parallel

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// For calls fn(i) for every i below n, on as many goroutines as there are
// CPUs, and returns when every call has. fn must be safe to run
// concurrently with itself; it writes its result at index i.
func For(n int, fn func(i int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), n) {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
				fn(i)
			}
		})
	}
	wg.Wait()
}
