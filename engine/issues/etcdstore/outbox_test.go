package etcdstore

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/agenttree/agenttree/engine/issues/backend"
	"github.com/agenttree/agenttree/engine/outbox"
)

// An issue's outbox is kept under its keys, so the store's watch names
// the issue when a message is put in it, and its locks (under P/locks/)
// name none.
func TestTheWatchNamesTheIssueOfAnOutboxChanged(t *testing.T) {
	cli := newClient(t, startEtcd(t))
	s := newStore(t, cli, "/agenttree/boxwatch")
	ctx, cancel := context.WithCancel(context.Background())
	var mu sync.Mutex
	var named []int
	ready, done := make(chan struct{}), make(chan error, 1)
	go func() {
		done <- s.Watch(ctx, func() { close(ready) }, func(id int) {
			mu.Lock()
			named = append(named, id)
			mu.Unlock()
		}, func() {})
	}()
	<-ready
	m, err := outbox.At(s.Outbox(8)).Put(ctx, outbox.Message{Text: "hello"})
	require.NoError(t, err)
	resp, err := cli.Get(ctx, s.p+"/", clientv3.WithPrefix(), clientv3.WithKeysOnly())
	require.NoError(t, err)
	require.Len(t, resp.Kvs, 1)
	assert.Equal(t, "/agenttree/boxwatch/issues/0000000008/outbox/q/"+m.ID, string(resp.Kvs[0].Key), "the lock is gone, the message kept")
	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(named) > 0
	}, 30*time.Second, 10*time.Millisecond)
	_, err = s.Outbox(8).IDs(ctx, outbox.Queued) // a read names none
	require.NoError(t, err)
	cancel()
	require.NoError(t, <-done)
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, []int{8}, named, "the put named its issue, once; the lock's keys none")
}

// An issue's outbox is not its state: Export leaves it out, and Import,
// which replaces the state, leaves the messages where they are (package
// transfer copies them apart).
func TestImportLeavesTheOutbox(t *testing.T) {
	cli := newClient(t, startEtcd(t))
	s := newStore(t, cli, "/agenttree/boximport")
	ctx := context.Background()
	box := outbox.At(s.Outbox(3))
	m, err := box.Put(ctx, outbox.Message{Text: "waiting"})
	require.NoError(t, err)
	w := backend.Whole{ID: 3, State: []byte("state"), Log: []byte("line 1\n"), Watch: []byte("w")}
	require.NoError(t, s.Import(ctx, w, time.Minute))
	require.NoError(t, s.Import(ctx, w, time.Minute), "imported again: the old keys cleared")

	got, err := s.Export(ctx, 3)
	require.NoError(t, err)
	assert.Equal(t, w, got, "the outbox is not the issue's state")
	pending, err := box.Pending()
	require.NoError(t, err)
	require.Len(t, pending, 1)
	assert.Equal(t, m, pending[0])
}
