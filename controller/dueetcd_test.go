package controller

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/agenttree/agenttree/controller/dueset"
	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/engine/issues/etcdstore"
	"github.com/agenttree/agenttree/engine/issues/etcdstore/etcdtest"
	"github.com/agenttree/agenttree/engine/outbox"
	"github.com/agenttree/agenttree/hooks/builtin"
	"github.com/agenttree/agenttree/stages/load"
)

// Over etcd, whose stamps say nothing, the controller keeps what it read
// of each issue while etcd's watch does not name it: a tick with nothing
// changed reads no issue, where without the watch it reads every one;
// a person's approve through another store, and a message put in the
// outbox, are seen within a tick or two.
func TestOverEtcdTheWatchKeepsTheTicksFromReadingEveryIssue(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "agenttree.yaml")
	require.NoError(t, os.WriteFile(path, []byte(dueConfig), 0o644))
	root := filepath.Join(dir, "_agenttree")
	cluster := etcdtest.Start(t)
	open := func(b *reads) *engine.Engine {
		reg := builtin.Registry()
		cfg, err := load.File(path, reg)
		require.NoError(t, err)
		if b == nil {
			b = &reads{Backend: etcdstore.New(cluster.Client(t), "/agenttree/due")}
		}
		store, err := issues.OpenWith(root, b)
		require.NoError(t, err)
		return engine.New(cfg, store, reg, nil)
	}
	for _, watched := range []bool{false, true} {
		counted := &reads{Backend: etcdstore.New(cluster.Client(t), "/agenttree/due")}
		e := open(counted)
		other := open(nil)
		c := &Controller{Load: func() (*engine.Engine, error) { return e, nil }}
		r := &dueRig{rig: &rig{dir: dir, c: c}, e: e, other: other, now: time.Now()}
		c.Now = func() time.Time { return r.now }
		c.wall = func() time.Time { return time.Now().Add(time.Hour) }
		if watched {
			t.Cleanup(c.WatchIssues(context.Background()))
			c.dueSet().Recheck = 24 * time.Hour // seen by the watch, not the minute's read
			// etcd keeps the outboxes too: its watch names their changes,
			// and no file is watched, on any system.
			require.IsType(t, &dueset.Named{}, c.dueSet().Feed)
		}
		ids := make([]int, 5)
		for i := range ids {
			ids[i] = r.create(t, "review")
			r.quiet(t, ids[i])
		}
		id := ids[0]
		require.Eventually(t, func() bool { return r.state(t, id) == "" }, settleWithin, lookEvery)
		r.state(t, id)
		counted.n.Store(0)
		for range 3 {
			require.Equal(t, "", r.state(t, id))
		}
		if !watched {
			assert.Equal(t, int64(3*len(ids)), counted.n.Load(), "without the watch, every issue read at every tick")
			continue
		}
		assert.Zero(t, counted.n.Load(), "with the watch, nothing changed: no issue read")
		require.NotNil(t, c.dueSet().Kept(id))

		_, err := other.Approve(ctx, id, engine.Actor{Kind: engine.ActorHuman}, false)
		require.NoError(t, err)
		require.Eventually(t, func() bool { return r.state(t, id) == "act" }, settleWithin, lookEvery, "the approve through another store is seen")
		_, err = other.Outbox(ids[1]).Put(ctx, outbox.Message{Key: "note", To: outbox.ToManager, Kind: "note", Text: "hello"})
		require.NoError(t, err)
		require.Eventually(t, func() bool { return r.state(t, ids[1]) == "mail" }, settleWithin, lookEvery, "the outbox's message is seen")
	}
}

// A cluster out of reach when the controller starts does not hold it at
// the watch's start: after a bounded wait the ticks read every issue, as
// without the watch.
func TestAStoreWatchThatCannotBeginHoldsNothing(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "agenttree.yaml")
	require.NoError(t, os.WriteFile(path, []byte(dueConfig), 0o644))
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{"127.0.0.1:1"}, DialTimeout: time.Second, Logger: zap.NewNop()})
	require.NoError(t, err)
	t.Cleanup(func() { cli.Close() })
	b := etcdstore.New(cli, "/agenttree/gone")
	reg := builtin.Registry()
	cfg, err := load.File(path, reg)
	require.NoError(t, err)
	st, err := issues.OpenWith(filepath.Join(dir, "_agenttree"), b)
	require.NoError(t, err)
	e := engine.New(cfg, st, reg, nil)
	c := &Controller{Load: func() (*engine.Engine, error) { return e, nil }}
	start := time.Now()
	stop := c.WatchIssues(context.Background())
	stop()
	assert.Less(t, time.Since(start), storeWatchWait+20*time.Second, "the watch's start was waited for a bounded time")
	assert.Nil(t, c.dueSet().Feed, "no feed: every issue read at each tick")
}
