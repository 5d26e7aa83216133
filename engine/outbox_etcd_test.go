package engine_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/engine/issues/backend"
	"github.com/agenttree/agenttree/engine/issues/etcdstore"
	"github.com/agenttree/agenttree/engine/issues/etcdstore/etcdtest"
	"github.com/agenttree/agenttree/engine/outbox"
	"github.com/agenttree/agenttree/hooks"
	"github.com/agenttree/agenttree/stages"
	"github.com/agenttree/agenttree/stages/load"
)

// wrapped is a backend through a wrapper, as tests count a store's
// reads: what the store keeps is found through it.
type wrapped struct{ backend.Backend }

func (w wrapped) Unwrap() backend.Backend { return w.Backend }

// Over etcd the outboxes are in the shared store: a message the
// controller of one host queues as it steps an issue back is pending
// for another host's engine, in a checkout of its own, and delivered
// there it is delivered for both; nothing of it is in either checkout's
// files.
func TestOverEtcdAMessageQueuedOnOneHostIsPendingOnAnother(t *testing.T) {
	cluster := etcdtest.Start(t)
	const text = `
stages:
  - name: implement
    substages:
      - name: code
      - name: feedback
  - name: pr_ready
    host: controller
    post_start:
      - ci: {on_failure: [{tell: "CI is red, look at lint"}, {step_back_to: implement.code}]}
  - name: accepted
    terminal: completion
`
	host := func(t *testing.T, reg *hooks.Registry) *engine.Engine {
		dir := t.TempDir()
		path := filepath.Join(dir, stages.FileName)
		require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
		cfg, err := load.File(path, reg)
		require.NoError(t, err)
		s := etcdstore.New(cluster.Client(t), "/agenttree/hosts")
		t.Cleanup(func() { s.Close() })
		store, err := issues.OpenWith(filepath.Join(dir, "_agenttree"), wrapped{s})
		require.NoError(t, err)
		return engine.New(cfg, store, reg, nil)
	}
	s := &script{ci: []hooks.Outcome{ciFailed("aaa", "lint")}}
	leader, node := host(t, s.registry()), host(t, s.registry())

	iss := create(t, leader, "pr_ready", nil)
	res := reconcile(t, leader, iss.ID)
	require.Equal(t, engine.StatusSteppedBack, res.Status, res.Reasons)

	pending, err := node.Outbox(iss.ID).Pending()
	require.NoError(t, err)
	require.Len(t, pending, 2, "the hook's message and the step back's, seen on the other host")
	assert.Equal(t, "CI is red, look at lint", pending[0].Text)
	assert.Empty(t, node.Outbox(iss.ID).Dir(), "not in a directory")
	assert.NoDirExists(t, filepath.Join(leader.Store.HostDir(iss.ID), "outbox"))

	var got []string
	delivered, err := node.Outbox(iss.ID).Deliver(context.Background(), func(_ context.Context, m outbox.Message) error {
		got = append(got, m.Text)
		return nil
	}, nil)
	require.NoError(t, err)
	assert.Len(t, delivered, 2)
	pending, err = leader.Outbox(iss.ID).Pending()
	require.NoError(t, err)
	assert.Empty(t, pending, "delivered on one host: delivered for all")
	recent, err := leader.Outbox(iss.ID).Recent(0)
	require.NoError(t, err)
	assert.Len(t, recent, 2)
}
