package etcdstore

import (
	"context"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/agenttree/agenttree/engine/issues/etcdstore/etcdbox"
	"github.com/agenttree/agenttree/engine/outbox"
)

var _ outbox.Keeper = (*Store)(nil)

// Outbox is issue id's outbox, kept under the issue's keys
// (P/issues/<id>/outbox/, package etcdbox) so that every host sharing
// the store shares it, and the store's watch names the issue when a
// message is put or delivered (docs/ARCHITECTURE.md §8).
func (s *Store) Outbox(id int) outbox.Place {
	return etcdbox.New(etcdbox.Config{
		Client:  s.cli,
		Keys:    s.outboxPrefix(id),
		Timeout: s.timeout,
		Lock: func(ctx context.Context, name string, wait time.Duration, what string) (func(), error) {
			return s.Mutex(ctx, "outbox/"+pad(id)+"/"+name, wait, what)
		},
	})
}

func (s *Store) outboxPrefix(id int) string { return s.issuePrefix(id) + "outbox/" }

// Mutex takes the lock P/locks/<name>, as the issues' are taken: this
// process's turn first, then a concurrency.Mutex on the locks' session,
// made anew when its lease ended. It waits until ctx ends or wait passes
// (none when 0); a wait that ends with the lock held elsewhere is an
// error wrapping atomicfile.ErrLocked, which what names.
func (s *Store) Mutex(ctx context.Context, name string, wait time.Duration, what string) (unlock func(), err error) {
	h, err := s.lock(ctx, s.p+"/locks/"+name, wait, what)
	if err != nil {
		return nil, err
	}
	return h.Unlock, nil
}

// notOutbox are the ranges of issue id's keys but its outbox's, which
// is not the issue's state: an Import replaces the state and leaves the
// messages (package transfer copies them apart).
func (s *Store) notOutbox(id int) []clientv3.Op {
	box := s.outboxPrefix(id)
	return []clientv3.Op{
		clientv3.OpDelete(s.issuePrefix(id), clientv3.WithRange(box)),
		clientv3.OpDelete(clientv3.GetPrefixRangeEnd(box), clientv3.WithRange(clientv3.GetPrefixRangeEnd(s.issuePrefix(id)))),
	}
}
