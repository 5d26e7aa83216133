package etcdstore

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/agenttree/agenttree/engine/issues/backend"
	"github.com/agenttree/agenttree/engine/issues/etcdstore/etcdtest"
	"github.com/agenttree/agenttree/engine/issues/storetest"
)

// startEtcd starts a one-member etcd, stopped when the test ends; it
// returns its client URL.
func startEtcd(t *testing.T) string { return etcdtest.Start(t).Endpoint }

func newClient(t *testing.T, endpoint string) *clientv3.Client {
	t.Helper()
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{endpoint}, DialTimeout: 10 * time.Second, Logger: zap.NewNop()})
	require.NoError(t, err)
	t.Cleanup(func() { cli.Close() })
	return cli
}

// newStore is a Store on cli under prefix, closed when the test ends.
func newStore(t *testing.T, cli *clientv3.Client, prefix string) *Store {
	s := New(cli, prefix)
	t.Cleanup(func() { s.Close() })
	return s
}

// The etcd backend passes the store backends' conformance suite, each
// check under a prefix of its own on one embedded etcd, a second process
// being a second client.
func TestEtcdstoreConforms(t *testing.T) {
	endpoint := startEtcd(t)
	cli := newClient(t, endpoint)
	var n atomic.Int64
	storetest.Run(t, func(t *testing.T) storetest.Subject {
		prefix := fmt.Sprintf("/agenttree/test-%d", n.Add(1))
		s := newStore(t, cli, prefix)
		ctx := context.Background()
		return storetest.Subject{
			Backend: s,
			Again:   func(t *testing.T) backend.Backend { return newStore(t, newClient(t, endpoint), prefix) },
			Remove: func(t *testing.T, id int) {
				_, err := cli.Txn(ctx).Then(clientv3.OpDelete(s.idKey(id)), clientv3.OpDelete(s.issuePrefix(id), clientv3.WithPrefix())).Commit()
				require.NoError(t, err)
			},
			RemoveLog: func(t *testing.T, id int) {
				_, err := cli.Txn(ctx).Then(clientv3.OpDelete(s.headKey(id)), clientv3.OpDelete(s.linesPrefix(id), clientv3.WithPrefix())).Commit()
				require.NoError(t, err)
			},
			Tear: func(t *testing.T, id int, partial []byte) {
				resp, err := cli.Get(ctx, s.linesPrefix(id), clientv3.WithPrefix(), clientv3.WithCountOnly())
				require.NoError(t, err)
				_, err = cli.Put(ctx, s.lineKey(id, int(resp.Count)+1), string(partial))
				require.NoError(t, err)
			},
		}
	})
}

// A process whose lease ended writes nothing under the lock it held:
// every write compares the lock key's revision in its transaction.
func TestAWriterThatLostItsLeaseIsFenced(t *testing.T) {
	cli := newClient(t, startEtcd(t))
	s := newStore(t, cli, "/fenced")
	ctx := context.Background()
	id, err := s.Create(ctx, time.Minute, func(id int) (backend.Write, error) {
		return backend.Write{ID: id, Line: []byte(`{"prev":"","hash":"x"}` + "\n"), State: []byte("v1")}, nil
	})
	require.NoError(t, err)
	h, err := s.Lock(ctx, id, time.Minute)
	require.NoError(t, err)
	_, err = cli.Revoke(ctx, h.(*held).sess.Lease())
	require.NoError(t, err)

	tests := []struct {
		name  string
		write func() error
	}{
		{"commit", func() error {
			logged, err := s.Commit(ctx, h, backend.Write{ID: id, Line: []byte("line 2\n"), State: []byte("v2")})
			assert.False(t, logged)
			return err
		}},
		{"state only", func() error {
			_, err := s.Commit(ctx, h, backend.Write{ID: id, State: []byte("v2")})
			return err
		}},
		{"watch", func() error { return s.WriteWatch(ctx, h, id, []byte("w")) }},
		{"set aside", func() error { _, err := s.SetAside(ctx, h, id, 1, "aside"); return err }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.ErrorIs(t, tt.write(), errFenced)
		})
	}
	snap, err := s.Read(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, "v1", string(snap.State), "nothing written")
	resp, err := cli.Get(ctx, s.linesPrefix(id), clientv3.WithPrefix(), clientv3.WithCountOnly())
	require.NoError(t, err)
	assert.EqualValues(t, 1, resp.Count, "nothing logged")
	h.Unlock()

	again, err := s.Lock(ctx, id, time.Minute)
	require.NoError(t, err, "a new session takes the lock")
	again.Unlock()
}

// The keys are the layout of the package comment, ids and lines
// zero-padded so that key order is number order.
func TestKeysSortAsNumbers(t *testing.T) {
	s := New(nil, "/p/")
	assert.Equal(t, "/p/issues/0000000009/log/0000000010", s.lineKey(9, 10))
	assert.Less(t, s.lineKey(1, 9), s.lineKey(1, 10))
	assert.Less(t, s.idKey(9), s.idKey(10))
	assert.Equal(t, "/p/last-id", s.lastIDKey())
}
