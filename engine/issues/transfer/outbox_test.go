package transfer_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/engine/issues/etcdstore/etcdtest"
	"github.com/agenttree/agenttree/engine/issues/filestore"
	"github.com/agenttree/agenttree/engine/issues/transfer"
	"github.com/agenttree/agenttree/engine/outbox"
)

func texts(t *testing.T, ms []outbox.Message, err error) []string {
	t.Helper()
	require.NoError(t, err)
	var out []string
	for _, m := range ms {
		out = append(out, m.Text)
	}
	return out
}

// The outboxes move with the state between files and etcd, which keeps
// them: no message waiting is lost, the delivered ones stay delivered
// (their keys put once), and a transfer run again after the source
// delivered one carries that over.
func TestOutboxesMoveWithTheState(t *testing.T) {
	ctx := context.Background()
	root := filesRepo(t)
	files := filestore.Open(root)
	st, err := issues.Open(root)
	require.NoError(t, err)
	src := outbox.Open(filepath.Join(st.HostDir(2), "outbox"))
	for _, m := range []outbox.Message{{Key: "k1", Text: "delivered"}, {Key: "k2", Text: "waiting"}, {Key: "k3", Text: "waiting too"}} {
		_, err := src.Put(ctx, m)
		require.NoError(t, err)
	}
	_, err = src.Deliver(ctx, func(_ context.Context, m outbox.Message) error {
		if m.Text != "delivered" {
			return outbox.ErrGone
		}
		return nil
	}, nil)
	require.ErrorIs(t, err, outbox.ErrGone)
	etcd := etcdAt(t, etcdtest.Start(t), "/boxes")

	res, err := transfer.Run(ctx, transfer.Options{From: files, To: etcd, Root: root})
	require.NoError(t, err)
	require.True(t, res.OK)
	assert.Equal(t, 3, res.Issues[1].Messages)
	there := outbox.At(etcd.Outbox(2))
	pending, err := there.Pending()
	assert.Equal(t, []string{"waiting", "waiting too"}, texts(t, pending, err))
	recent, err := there.Recent(0)
	assert.Equal(t, []string{"delivered", "waiting", "waiting too"}, texts(t, recent, err))
	again, err := there.Put(ctx, outbox.Message{Key: "k1", Text: "delivered"})
	require.NoError(t, err)
	assert.Equal(t, outbox.Sent, again.State, "a key put once stays put")

	_, err = src.Deliver(ctx, func(_ context.Context, m outbox.Message) error {
		if m.Text != "waiting" {
			return outbox.ErrGone
		}
		return nil
	}, nil)
	require.ErrorIs(t, err, outbox.ErrGone)
	res, err = transfer.Run(ctx, transfer.Options{From: files, To: etcd, Root: root})
	require.NoError(t, err)
	assert.Equal(t, transfer.Same, res.Issues[1].Action)
	assert.Equal(t, 1, res.Issues[1].Messages, "the one delivered since")
	pending, err = there.Pending()
	assert.Equal(t, []string{"waiting too"}, texts(t, pending, err), "delivered at the source: not delivered again")

	back := filepath.Join(t.TempDir(), "_agenttree")
	res, err = transfer.Run(ctx, transfer.Options{From: etcd, To: filestore.Open(back), Root: back})
	require.NoError(t, err)
	require.True(t, res.OK)
	backSt, err := issues.Open(back)
	require.NoError(t, err)
	pending, err = outbox.Open(filepath.Join(backSt.HostDir(2), "outbox")).Pending()
	assert.Equal(t, []string{"waiting too"}, texts(t, pending, err), "and back to files")
	for _, m := range res.Issues {
		if m.ID != 2 {
			assert.Zero(t, m.Messages, "issue %d had none", m.ID)
			assert.NoDirExists(t, filepath.Join(backSt.HostDir(m.ID), "outbox"), "no outbox made for it")
		}
	}
}
