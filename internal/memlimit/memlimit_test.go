package memlimit

import (
	"math"
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/assert"
)

// The controller's memory limit covers what a tick over its issues keeps
// live, with room, and is left alone when GOMEMLIMIT says what it is.
// At 10,000 issues it leaves the process under bench/controller's
// 100 MiB target: the process maps about 10 MiB beside the limit
// (bench/README.md); at 7 KiB an issue it did not.
func TestTheMemoryLimitFollowsTheIssues(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64))
	for _, tt := range []struct {
		name      string
		env       string
		issues    int
		least     int64 // at least
		less      int64 // and less than
		unchanged bool
	}{
		{name: "a small store: the floor", issues: 0, least: Min, less: Min + 1},
		{name: "10,000 issues: room, and under the benchmark's target", issues: 10_000, least: 10_000 * PerIssue, less: 90 << 20},
		{name: "100,000 issues: room above what they keep live", issues: 100_000, least: 100_000 * PerIssue, less: 100_000 * PerIssue * 3 / 2},
		{name: "GOMEMLIMIT is the person's", env: "1GiB", issues: 100_000, unchanged: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("GOMEMLIMIT", tt.env)
			debug.SetMemoryLimit(1 << 30)
			Bound(tt.issues)
			limit := debug.SetMemoryLimit(-1)
			if tt.unchanged {
				assert.Equal(t, int64(1<<30), limit)
				return
			}
			assert.GreaterOrEqual(t, limit, tt.least)
			assert.Less(t, limit, tt.less)
		})
	}
}
