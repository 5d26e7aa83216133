package etcdnodes_test

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/controller/nodes"
	"github.com/agenttree/agenttree/controller/nodes/etcdnodes"
	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/engine/issues/etcdstore/etcdtest"
	"github.com/agenttree/agenttree/engine/people"
	"github.com/agenttree/agenttree/hooks/builtin"
	"github.com/agenttree/agenttree/stages"
	"github.com/agenttree/agenttree/stages/load"
)

const sharePipeline = `project: shop
state: {backend: etcd, etcd: {endpoints: ["http://127.0.0.1:2379"]}, nodes: {capacity: 1}}
stages:
  - name: backlog
    parking_lot: true
  - name: work
  - name: review
    human_review: true
  - name: accepted
    terminal: completion
`

// shareEngine is an engine over files whose config has state.nodes (its
// etcd is not dialled: the registry is given apart).
func shareEngine(t *testing.T) *engine.Engine {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, stages.FileName)
	require.NoError(t, os.WriteFile(path, []byte(sharePipeline), 0o644))
	reg := builtin.Registry()
	cfg, err := load.File(path, reg)
	require.NoError(t, err)
	st, err := issues.Open(filepath.Join(dir, "_agenttree"))
	require.NoError(t, err)
	return engine.New(cfg, st, reg, nil)
}

func read(e *engine.Engine) func(ids []int) []*issues.Issue {
	return func(ids []int) []*issues.Issue {
		out := make([]*issues.Issue, len(ids))
		for i, id := range ids {
			out[i], _ = e.Store.Get(id)
		}
		return out
	}
}

// The elected controller gives a node only to issues where an agent
// works, by room: a parking lot's issue waits without taking one; an
// issue keeps its node at a review; a finished one frees the room.
func TestTheControllerGivesANodeToIssuesAtAnAgentsStage(t *testing.T) {
	c := etcdtest.Start(t)
	ctx := context.Background()
	reg := etcdnodes.New(c.Client(t), prefix)
	for _, name := range []string{"a", "b"} {
		_, err := reg.Join(ctx, nodes.Node{Name: name, Capacity: 1}, 5*time.Second)
		require.NoError(t, err)
	}
	e := shareEngine(t)
	create := func(stage string) int {
		iss, err := e.Create(ctx, engine.NewIssue{Title: "x", Stage: stage})
		require.NoError(t, err)
		return iss.ID
	}
	parked, one, two, three := create("backlog"), create("work"), create("work"), create("work")
	var log bytes.Buffer
	ctl := &nodes.Share{Registry: reg, Places: true, Log: slog.New(slog.NewTextHandler(&log, nil))}
	h, err := ctl.Homes(ctx, e, read(e))
	require.NoError(t, err)
	assert.Equal(t, map[int]string{one: "a", two: "b"}, h.Assigned, "one each by room; the parked issue and the third wait")
	_ = parked

	// Issue one finishes: its room is free, and the third is given it.
	_, err = people.Move(ctx, e, one, engine.Actor{Kind: engine.ActorHuman}, "accepted", "done")
	require.NoError(t, err)
	h, err = ctl.Homes(ctx, e, read(e))
	require.NoError(t, err)
	assert.Equal(t, "a", h.Assigned[three])

	node := &nodes.Share{Registry: reg, Self: "b", Log: ctl.Log}
	h, err = node.Homes(ctx, e, read(e))
	require.NoError(t, err)
	assert.True(t, h.Mine(two))
	assert.True(t, h.Elsewhere(three))
	assert.False(t, h.Elsewhere(parked))

	// A node whose lease ended does not know its issues: an error, so
	// that it neither starts nor stops an agent.
	node.Joined = func() bool { return false }
	_, err = node.Homes(ctx, e, read(e))
	assert.ErrorIs(t, err, nodes.ErrNotJoined)
	// A cluster out of reach is an error too.
	c.Stop()
	ctx2, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	node.Joined = nil
	_, err = node.Homes(ctx2, e, read(e))
	assert.Error(t, err)
}
