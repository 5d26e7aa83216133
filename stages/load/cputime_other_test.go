//go:build !unix

package load_test

import "time"

// cpuTime is not measured here: the benchmarks report wall time only.
func cpuTime() (time.Duration, bool) { return 0, false }
