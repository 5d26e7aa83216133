package sessions_test

import (
	"context"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/controller/nodes"
	"github.com/agenttree/agenttree/controller/nodes/etcdnodes"
	"github.com/agenttree/agenttree/engine/issues/etcdstore/etcdtest"
)

const nodesPrefix = "/agenttree/test/keep-nodes"

// asNode makes the rig's controller node a of the registry in members.
func (r *keepRig) asNode(members *etcdtest.Members) *etcdnodes.Registry {
	reg := etcdnodes.New(members.Client(r.T), nodesPrefix)
	share := &nodes.Share{Registry: reg, Self: "a", Log: slog.New(slog.DiscardHandler)}
	r.ctl.Node, r.ctl.Homes = true, share.Homes
	return reg
}

func (r *keepRig) live(id int) bool {
	rec, err := r.M.Record(id)
	if err != nil || !rec.Stopped.IsZero() {
		return false
	}
	ok, err := r.Tmux.HasSession(context.Background(), rec.Session)
	return err == nil && ok
}

// A node that cannot tell which issues are its own (the cluster out of
// reach) neither starts nor stops an agent: its agents outlive the
// outage, not started again after it.
func TestANodeThatCannotTellKeepsItsAgents(t *testing.T) {
	members := etcdtest.StartMembers(t, 1)
	r := newKeepRig(t, "live", 0)
	reg := r.asNode(members)
	iss := r.Create("Review me", "review")
	require.NoError(t, reg.Assign(context.Background(), iss.ID, "a", ""))
	r.tickUntil("the reviewer started on its node", func() bool { return r.live(iss.ID) })

	members.Stop(0)
	_, err := r.ctl.Tick(context.Background())
	require.NoError(t, err)
	assert.True(t, r.live(iss.ID), "its agent outlives a tick that could not tell")
	members.Restart(0)
	for range 3 {
		_, err = r.ctl.Tick(context.Background())
		require.NoError(t, err)
	}
	assert.True(t, r.live(iss.ID))
	assert.Equal(t, []string{"checker/start"}, r.runs(iss.ID), "started once")
}

// An issue moved to another node has its agent here stopped and its
// record removed; moved back, its agent starts here again.
func TestAnIssueMovedAwayAndBack(t *testing.T) {
	members := etcdtest.StartMembers(t, 1)
	r := newKeepRig(t, "live", 0)
	reg := r.asNode(members)
	iss := r.Create("Review me", "review")
	ctx := context.Background()
	require.NoError(t, reg.Assign(ctx, iss.ID, "a", ""))
	r.tickUntil("the reviewer started on its node", func() bool { return r.live(iss.ID) })

	require.NoError(t, reg.Assign(ctx, iss.ID, "b", "a"))
	r.tickUntil("its agent here stopped", func() bool { return !r.live(iss.ID) })
	_, err := r.M.Record(iss.ID)
	assert.Error(t, err, "no record left to keep it from starting here again")

	require.NoError(t, reg.Assign(ctx, iss.ID, "a", "b"))
	r.tickUntil("its agent started here again", func() bool { return r.live(iss.ID) })
	assert.Equal(t, []string{"checker/start", "checker/start"}, r.runs(iss.ID))
}
