package memlimit

import (
	"math"
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/assert"
)

// The controller's memory limit covers what a tick over its issues keeps
// live, with room, and is left alone when GOMEMLIMIT says what it is.
func TestTheMemoryLimitFollowsTheIssues(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64))
	t.Setenv("GOMEMLIMIT", "")
	Bound(0)
	assert.Equal(t, int64(Min), debug.SetMemoryLimit(-1), "a small store: the floor")
	Bound(100_000)
	limit := debug.SetMemoryLimit(-1)
	assert.Greater(t, limit, int64(100_000*PerIssue), "room above what 100,000 issues keep live")
	assert.Less(t, limit, int64(100_000*PerIssue)*3/2)

	t.Setenv("GOMEMLIMIT", "1GiB")
	debug.SetMemoryLimit(1 << 30)
	Bound(100_000)
	assert.Equal(t, int64(1<<30), debug.SetMemoryLimit(-1), "GOMEMLIMIT is the person's")
}
