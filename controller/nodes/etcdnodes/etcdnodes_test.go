package etcdnodes_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/controller/nodes"
	"github.com/agenttree/agenttree/controller/nodes/etcdnodes"
	"github.com/agenttree/agenttree/engine/issues/etcdstore/etcdtest"
)

const prefix = "/agenttree/test/nodes"

// A node joins under its name while its lease lasts: a second of the
// same name is refused, saying who has it; one that leaves is gone at
// once, one whose process is gone (its client closed) within the lease.
func TestANodeIsAliveWhileItsLeaseLasts(t *testing.T) {
	c := etcdtest.Start(t)
	ctx := context.Background()
	r := etcdnodes.New(c.Client(t), prefix)
	m, err := r.Join(ctx, nodes.Node{Name: "a", Host: "host-a 1", Capacity: 2, Since: time.Now()}, 2*time.Second)
	require.NoError(t, err)

	_, err = etcdnodes.New(c.Client(t), prefix).Join(ctx, nodes.Node{Name: "a", Host: "host-b 2"}, 2*time.Second)
	require.ErrorIs(t, err, nodes.ErrTaken)
	assert.Contains(t, err.Error(), "host-a 1")

	live, err := r.Live(ctx)
	require.NoError(t, err)
	require.Len(t, live, 1)
	assert.Equal(t, "host-a 1", live[0].Host)

	m.Leave()
	live, err = r.Live(ctx)
	require.NoError(t, err)
	assert.Empty(t, live, "a node that leaves is gone at once")

	other := c.Client(t)
	_, err = etcdnodes.New(other, prefix).Join(ctx, nodes.Node{Name: "b", Capacity: 1}, 2*time.Second)
	require.NoError(t, err)
	other.Close() // as a process killed: no more renewals
	require.Eventually(t, func() bool {
		live, err := r.Live(ctx)
		return err == nil && len(live) == 0
	}, 20*time.Second, 100*time.Millisecond, "a node killed is gone within its lease")
}

// An issue is given to a node once: a second giving (another controller,
// a person) from the same start is refused, one from what it is now is
// made.
func TestAnIssueIsGivenOnce(t *testing.T) {
	c := etcdtest.Start(t)
	ctx := context.Background()
	r := etcdnodes.New(c.Client(t), prefix)
	require.NoError(t, r.Assign(ctx, 7, "a", ""))
	require.ErrorIs(t, r.Assign(ctx, 7, "b", ""), nodes.ErrMoved)
	require.ErrorIs(t, r.Assign(ctx, 7, "b", "c"), nodes.ErrMoved)
	require.NoError(t, r.Assign(ctx, 7, "b", "a"))
	require.NoError(t, r.Assign(ctx, 12, "a", ""))
	got, err := r.Assigned(ctx)
	require.NoError(t, err)
	assert.Equal(t, map[int]string{7: "b", 12: "a"}, got)
}
