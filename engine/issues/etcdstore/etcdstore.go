// Package etcdstore is the issue store's backend (package backend) kept
// in etcd, for state shared beyond one machine (docs/ARCHITECTURE.md §2,
// the store backend). It keeps the bytes; what they must be is package
// issues' and eventlog's, as for the files.
//
// The keys, under a prefix P of the caller's (ids zero-padded, so that
// key order is id and line order):
//
//	P/last-id                      the last id given (decimal)
//	P/ids/<id>                     one per issue stored: what IDs lists
//	P/issues/<id>/state            issue.yaml's bytes
//	P/issues/<id>/watch            watch.yaml's bytes
//	P/issues/<id>/log              the log's head: its last line's number
//	P/issues/<id>/log/<n>          line n of the log, "\n" included
//	P/issues/<id>/aside/<name>     lines set aside, in the record name
//	P/issues/<id>/outbox/...       its outbox (package etcdbox)
//	P/locks/issues/<id>/<lease>    the issue's lock (concurrency.Mutex)
//	P/locks/list/<lease>           the issue list's lock, for Create
//	P/locks/outbox/<id>/...        its outbox's locks (Mutex)
//
// A commit is one transaction: the line's key, the head and the state are
// put together, if the writer still holds the issue's lock (the lock
// key's create revision) and the head is as it read it (its mod
// revision): a writer whose lease expired, or that lost a race it should
// not have been in, writes nothing. So the log is never behind the state
// and never ahead of it either; a line's revision orders it among every
// write under P, so a watcher of the prefix resumes from a revision.
package etcdstore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"

	"github.com/agenttree/agenttree/engine/issues/backend"
	"github.com/agenttree/agenttree/engine/issues/eventlog"
)

// Store keeps the issues under one prefix of an etcd cluster.
type Store struct {
	cli *clientv3.Client
	p   string
	// ttl is the lease of the locks' session, in seconds: how long the
	// locks of a process that died stay held.
	ttl int
	// timeout bounds a read made without the caller's context (Log).
	timeout time.Duration
	// own is whether Close closes cli too (Dial made it).
	own bool

	mu      sync.Mutex
	session *concurrency.Session
	// local serializes the goroutines of this process on one lock: a
	// concurrency.Mutex is one session's, and every goroutine here
	// shares the session.
	local map[string]chan struct{}
	// fence, when set, is compared by every write too (Fence).
	fence atomic.Pointer[clientv3.Cmp]
}

var _ backend.Backend = (*Store)(nil)

// Option sets one of New's settings.
type Option func(*Store)

// WithTTL sets the lease of the locks, in seconds (10 when unset): a
// process that dies holding a lock holds it that long.
func WithTTL(seconds int) Option { return func(s *Store) { s.ttl = seconds } }

// New is the backend kept under prefix in the cluster cli talks to. It
// reads nothing; the caller keeps cli and closes it after Close.
func New(cli *clientv3.Client, prefix string, opts ...Option) *Store {
	s := &Store{cli: cli, p: strings.TrimRight(prefix, "/"), ttl: 10, timeout: 30 * time.Second, local: map[string]chan struct{}{}}
	for _, o := range opts {
		o(s)
	}
	return s
}

// Client is the client s talks to the cluster through, for what shares
// its connection (the controllers' election, controller/leader).
func (s *Store) Client() *clientv3.Client { return s.cli }

// Fence makes every write of s from now on also compare that key is
// still the one created at revision rev: the leader's key of an election
// (controller/leader). A controller whose term ended, its lease expired
// while it was cut off or stalled, then writes nothing, though it still
// holds its issues' locks in its own view (docs/ARCHITECTURE.md §8,
// "One controller at a time"). An empty key takes the fence down.
func (s *Store) Fence(key string, rev int64) {
	if key == "" {
		s.fence.Store(nil)
		return
	}
	c := clientv3.Compare(clientv3.CreateRevision(key), "=", rev)
	s.fence.Store(&c)
}

// Close ends the locks' session: the locks still held are released. A
// Store Dial made closes its client too.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var err error
	if s.session != nil {
		err = s.session.Close()
		s.session = nil
	}
	if s.own {
		err = errors.Join(err, s.cli.Close())
		s.own = false
	}
	return err
}

// The keys of the layout in the package comment.
func pad(n int) string                     { return fmt.Sprintf("%010d", n) }
func (s *Store) lastIDKey() string         { return s.p + "/last-id" }
func (s *Store) idsPrefix() string         { return s.p + "/ids/" }
func (s *Store) idKey(id int) string       { return s.idsPrefix() + pad(id) }
func (s *Store) issuePrefix(id int) string { return s.p + "/issues/" + pad(id) + "/" }
func (s *Store) stateKey(id int) string    { return s.issuePrefix(id) + "state" }
func (s *Store) watchKey(id int) string    { return s.issuePrefix(id) + "watch" }
func (s *Store) headKey(id int) string     { return s.issuePrefix(id) + "log" }
func (s *Store) linesPrefix(id int) string { return s.headKey(id) + "/" }
func (s *Store) lineKey(id, n int) string  { return s.linesPrefix(id) + pad(n) }
func (s *Store) asideKey(id int, name string) string {
	return s.issuePrefix(id) + "aside/" + name
}
func (s *Store) issueLock(id int) string { return s.p + "/locks/issues/" + pad(id) }
func (s *Store) listLock() string        { return s.p + "/locks/list" }

// IDs lists P/ids/, keys only.
func (s *Store) IDs(ctx context.Context) ([]int, error) {
	resp, err := s.cli.Get(ctx, s.idsPrefix(), clientv3.WithPrefix(), clientv3.WithKeysOnly(),
		clientv3.WithSort(clientv3.SortByKey, clientv3.SortAscend))
	if err != nil {
		return nil, fmt.Errorf("list the issues: %w", err)
	}
	var ids []int
	for _, kv := range resp.Kvs {
		if id, err := strconv.Atoi(strings.TrimPrefix(string(kv.Key), s.idsPrefix())); err == nil && id > 0 {
			ids = append(ids, id)
		}
	}
	return ids, nil
}

// LastID reads P/last-id; a missing or unparsable one is 0.
func (s *Store) LastID(ctx context.Context) (int, error) {
	resp, err := s.cli.Get(ctx, s.lastIDKey())
	if err != nil {
		return 0, fmt.Errorf("read the last id: %w", err)
	}
	if len(resp.Kvs) == 0 {
		return 0, nil
	}
	n, _ := strconv.Atoi(string(resp.Kvs[0].Value))
	return n, nil
}

// Gone reports whether issue id has neither its P/ids/ key nor any key
// under P/issues/<id>/.
func (s *Store) Gone(ctx context.Context, id int) (bool, error) {
	resp, err := s.cli.Txn(ctx).Then(
		clientv3.OpGet(s.idKey(id), clientv3.WithCountOnly()),
		clientv3.OpGet(s.issuePrefix(id), clientv3.WithPrefix(), clientv3.WithCountOnly()),
	).Commit()
	if err != nil {
		return false, fmt.Errorf("issue %d: %w", id, err)
	}
	return count(resp, 0) == 0 && count(resp, 1) == 0, nil
}

// count is the count of the i-th range of a transaction's response.
func count(resp *clientv3.TxnResponse, i int) int64 {
	return resp.Responses[i].GetResponseRange().Count
}

// Read reads issue id's state key.
func (s *Store) Read(ctx context.Context, id int) (backend.Snapshot, error) {
	data, err := s.value(ctx, s.stateKey(id))
	if err != nil {
		return backend.Snapshot{}, fmt.Errorf("issue %d: %w", id, err)
	}
	return backend.Snapshot{ID: id, State: data}, nil
}

// ReadWatch reads issue id's watch key.
func (s *Store) ReadWatch(ctx context.Context, id int) ([]byte, error) {
	data, err := s.value(ctx, s.watchKey(id))
	if err != nil {
		return nil, fmt.Errorf("issue %d: watch: %w", id, err)
	}
	return data, nil
}

// value is key's value, nil when it is not there (an empty value is not
// nil: etcd keeps the key).
func (s *Store) value(ctx context.Context, key string) ([]byte, error) {
	resp, err := s.cli.Get(ctx, key)
	if err != nil || len(resp.Kvs) == 0 {
		return nil, err
	}
	if v := resp.Kvs[0].Value; v != nil {
		return v, nil
	}
	return []byte{}, nil
}

// Log is issue id's log, read from its line keys.
func (s *Store) Log(id int) eventlog.Lines { return lines{s: s, id: id} }

// errNoLog is a log with neither head nor lines.
func errNoLog(id int) error {
	return fmt.Errorf("issue %d has no log in etcd: %w", id, fs.ErrNotExist)
}

// errFenced is a write refused because the writer no longer holds the
// lock it was made under, or what it read changed meanwhile.
var errFenced = errors.New("refused by etcd: this process no longer holds the issue's lock (its lease ended), or leads no more (its term as the controller ended), or the issue changed meanwhile")
