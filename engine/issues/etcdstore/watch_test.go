package etcdstore

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The watch names the issue of each key changed under P/issues/ and
// P/ids/, none for the store's other keys, and returns when its client
// is closed.
func TestTheWatchNamesTheIssuesChanged(t *testing.T) {
	endpoint := startEtcd(t)
	cli := newClient(t, endpoint)
	s := New(cli, "/agenttree/watched")
	ctx := context.Background()
	var mu sync.Mutex
	var named []int
	lost := 0
	ready, done := make(chan struct{}), make(chan error, 1)
	go func() {
		done <- s.Watch(ctx, func() { close(ready) }, func(id int) {
			mu.Lock()
			named = append(named, id)
			mu.Unlock()
		}, func() { mu.Lock(); lost++; mu.Unlock() })
	}()
	<-ready
	for _, k := range []string{s.stateKey(3), s.lastIDKey(), s.idKey(4), s.lineKey(5, 1), "/agenttree/watchedother/issues/0000000006/state"} {
		_, err := cli.Put(ctx, k, "x")
		require.NoError(t, err)
	}
	_, err := cli.Delete(ctx, s.stateKey(3))
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(named) == 4
	}, 30*time.Second, 10*time.Millisecond)
	mu.Lock()
	assert.Equal(t, []int{3, 4, 5, 3}, named, "in order; last-id and another prefix name none")
	assert.Zero(t, lost)
	mu.Unlock()

	require.NoError(t, cli.Close())
	select {
	case err := <-done:
		assert.NoError(t, err)
	case <-time.After(30 * time.Second):
		t.Fatal("the watch went on with its client closed")
	}
}
