// Package etcdbox keeps an issue's outbox (engine/outbox's Place) in
// etcd, beside the state, when the state is there
// (docs/ARCHITECTURE.md §8): every host sharing the store then shares
// the messages not yet delivered, and the store's watch, which names the
// issue of any key under P/issues/<id>/, tells of each message put or
// delivered.
//
// The keys, under the prefix (etcdstore's package comment):
//
//	P/issues/<id>/outbox/q/<msgid>       a message not delivered yet
//	P/issues/<id>/outbox/sent/<msgid>    a message delivered, kept
//	P/locks/outbox/<id>/put, /deliver    the box's locks (etcdstore.Store.Mutex)
//
// Every write is one put; a message delivered moves to sent/ in one
// transaction (put there, deleted from the queue), where the files take
// two steps.
package etcdbox

import (
	"context"
	"fmt"
	"io/fs"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/agenttree/agenttree/engine/outbox"
)

// Config is one box's keys and how its locks are taken.
type Config struct {
	Client *clientv3.Client
	// Keys is the prefix of the box's keys, "/"-terminated:
	// P/issues/<id>/outbox/.
	Keys string
	// Lock takes the box's lock called name within wait, an error
	// wrapping atomicfile.ErrLocked when it stays held elsewhere: the
	// store's named lock (etcdstore.Store.Mutex), whose session is the
	// issues' locks'.
	Lock func(ctx context.Context, name string, wait time.Duration, what string) (func(), error)
	// Timeout bounds each request: a box read without the caller's
	// context (Box.Pending) does not wait for ever on a cluster out of
	// reach.
	Timeout time.Duration
}

// Place is one issue's outbox in etcd.
type Place struct{ c Config }

var (
	_ outbox.Place = (*Place)(nil)
	_ outbox.Mover = (*Place)(nil)
)

// New is the box c names. It reads nothing.
func New(c Config) *Place {
	if c.Timeout <= 0 {
		c.Timeout = 30 * time.Second
	}
	return &Place{c: c}
}

func (p *Place) String() string { return "etcd " + p.c.Keys }

func (p *Place) Where(f outbox.Folder, id string) string { return "etcd key " + p.key(f, id) }

func (p *Place) folder(f outbox.Folder) string {
	if f == outbox.Delivered {
		return p.c.Keys + "sent/"
	}
	return p.c.Keys + "q/"
}

func (p *Place) key(f outbox.Folder, id string) string { return p.folder(f) + id }

// bounded is ctx bounded by the request timeout.
func (p *Place) bounded(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, p.c.Timeout)
}

// Idle is true when no message is queued: one count, no lock. A cluster
// that cannot be asked is not idle: the delivery then says why.
func (p *Place) Idle(ctx context.Context) bool {
	ctx, cancel := p.bounded(ctx)
	defer cancel()
	resp, err := p.c.Client.Get(ctx, p.folder(outbox.Queued), clientv3.WithPrefix(), clientv3.WithCountOnly())
	return err == nil && resp.Count == 0
}

func (p *Place) Lock(ctx context.Context, name string, wait time.Duration) (func(), error) {
	return p.c.Lock(ctx, name, wait, "the outbox "+p.String())
}

// IDs lists the keys of f, sorted: the ids sort by time.
func (p *Place) IDs(ctx context.Context, f outbox.Folder) ([]string, error) {
	ctx, cancel := p.bounded(ctx)
	defer cancel()
	dir := p.folder(f)
	resp, err := p.c.Client.Get(ctx, dir, clientv3.WithPrefix(), clientv3.WithKeysOnly(),
		clientv3.WithSort(clientv3.SortByKey, clientv3.SortAscend))
	if err != nil {
		return nil, fmt.Errorf("list the outbox %s: %w", dir, err)
	}
	ids := make([]string, 0, len(resp.Kvs))
	for _, kv := range resp.Kvs {
		ids = append(ids, strings.TrimPrefix(string(kv.Key), dir))
	}
	return ids, nil
}

func (p *Place) Read(ctx context.Context, f outbox.Folder, id string) ([]byte, error) {
	ctx, cancel := p.bounded(ctx)
	defer cancel()
	key := p.key(f, id)
	resp, err := p.c.Client.Get(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", key, err)
	}
	if len(resp.Kvs) == 0 {
		return nil, fmt.Errorf("read %s: %w", key, fs.ErrNotExist)
	}
	return resp.Kvs[0].Value, nil
}

func (p *Place) Write(ctx context.Context, f outbox.Folder, id string, data []byte) error {
	ctx, cancel := p.bounded(ctx)
	defer cancel()
	key := p.key(f, id)
	if _, err := p.c.Client.Put(ctx, key, string(data)); err != nil {
		return fmt.Errorf("put %s: %w", key, err)
	}
	return nil
}

func (p *Place) Remove(ctx context.Context, f outbox.Folder, id string) error {
	ctx, cancel := p.bounded(ctx)
	defer cancel()
	key := p.key(f, id)
	if _, err := p.c.Client.Delete(ctx, key); err != nil {
		return fmt.Errorf("delete %s: %w", key, err)
	}
	return nil
}

// Move puts the delivered copy and deletes the queued one in one
// transaction.
func (p *Place) Move(ctx context.Context, id string, data []byte) error {
	ctx, cancel := p.bounded(ctx)
	defer cancel()
	_, err := p.c.Client.Txn(ctx).Then(
		clientv3.OpPut(p.key(outbox.Delivered, id), string(data)),
		clientv3.OpDelete(p.key(outbox.Queued, id)),
	).Commit()
	if err != nil {
		return fmt.Errorf("move %s to %s: %w", p.key(outbox.Queued, id), p.folder(outbox.Delivered), err)
	}
	return nil
}
