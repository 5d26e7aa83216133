package etcdstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"

	"github.com/agenttree/agenttree/engine/issues/backend"
	"github.com/agenttree/agenttree/internal/atomicfile"
)

// held is a lock taken: this process's turn on it (local) and the etcd
// mutex, whose key every write under it compares.
type held struct {
	s     *Store
	m     *concurrency.Mutex
	sess  *concurrency.Session
	local chan struct{}
}

// Unlock deletes the mutex's key. When that fails the session is ended
// (its lease revoked, which deletes the key): a lock left held would stop
// every other process until the lease ran out. Other locks of the
// session go with it, and their writes are then refused (errFenced),
// never made unlocked.
func (h *held) Unlock() {
	if h.m == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), h.s.timeout)
	defer cancel()
	if err := h.m.Unlock(ctx); err != nil {
		h.s.dropSession(h.sess)
	}
	h.m = nil
	<-h.local
}

// owner is what a write under h compares, with more: the lock is still
// h's, and the store's fence (Fence) still stands.
func (h *held) owner(more ...clientv3.Cmp) []clientv3.Cmp {
	cmps := append([]clientv3.Cmp{h.m.IsOwner()}, more...)
	if f := h.s.fence.Load(); f != nil {
		cmps = append(cmps, *f)
	}
	return cmps
}

// heldOf is h as this store made it.
func heldOf(h backend.Held) (*held, error) {
	mine, ok := h.(*held)
	if !ok || mine.m == nil {
		return nil, errors.New("etcdstore: a write under a lock this store did not give, or one released")
	}
	return mine, nil
}

// Lock takes issue id's lock.
func (s *Store) Lock(ctx context.Context, id int, timeout time.Duration) (backend.Held, error) {
	if err := s.stored(ctx, id); err != nil {
		return nil, err
	}
	return s.lock(ctx, s.issueLock(id), timeout, fmt.Sprintf("issue %d", id))
}

// TryLock takes issue id's lock if no one holds it, here or elsewhere.
func (s *Store) TryLock(ctx context.Context, id int) (backend.Held, error) {
	if err := s.stored(ctx, id); err != nil {
		return nil, err
	}
	key := s.issueLock(id)
	local := s.localOf(key)
	select {
	case local <- struct{}{}:
	default:
		return nil, backend.ErrBusy
	}
	h, err := s.take(ctx, key, local, (*concurrency.Mutex).TryLock)
	if err != nil {
		<-local
		if errors.Is(err, concurrency.ErrLocked) {
			return nil, backend.ErrBusy
		}
		return nil, fmt.Errorf("issue %d: take its lock: %w", id, err)
	}
	return h, nil
}

// take takes the etcd mutex at key with acquire, this process's turn
// local taken. A session whose lease ended before this process knew
// (etcd down for longer than the lease) is ended and a new one made,
// once.
func (s *Store) take(ctx context.Context, key string, local chan struct{}, acquire func(*concurrency.Mutex, context.Context) error) (*held, error) {
	for try := 1; ; try++ {
		sess, err := s.sessionOf(ctx)
		if err != nil {
			return nil, err
		}
		m := concurrency.NewMutex(sess, key)
		err = acquire(m, ctx)
		switch {
		case err == nil:
			return &held{s: s, m: m, sess: sess, local: local}, nil
		case try == 1 && (errors.Is(err, rpctypes.ErrLeaseNotFound) || errors.Is(err, concurrency.ErrSessionExpired)):
			s.dropSession(sess)
		default:
			return nil, err
		}
	}
}

// stored is ErrNotStored when issue id has neither a state nor a log.
func (s *Store) stored(ctx context.Context, id int) error {
	resp, err := s.cli.Txn(ctx).Then(
		clientv3.OpGet(s.stateKey(id), clientv3.WithCountOnly()),
		clientv3.OpGet(s.headKey(id), clientv3.WithCountOnly()),
	).Commit()
	if err != nil {
		return fmt.Errorf("issue %d: %w", id, err)
	}
	if count(resp, 0) == 0 && count(resp, 1) == 0 {
		return backend.ErrNotStored
	}
	return nil
}

// lock takes the lock at key, this process's turn first, waiting until
// ctx ends or timeout passes (none when 0).
func (s *Store) lock(ctx context.Context, key string, timeout time.Duration, what string) (*held, error) {
	wctx := ctx
	if timeout > 0 {
		var cancel context.CancelFunc
		wctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	local := s.localOf(key)
	select {
	case local <- struct{}{}:
	case <-wctx.Done():
		return nil, busy(ctx, what)
	}
	h, err := s.take(wctx, key, local, (*concurrency.Mutex).Lock)
	if err == nil {
		return h, nil
	}
	<-local
	if wctx.Err() != nil {
		return nil, busy(ctx, what)
	}
	return nil, fmt.Errorf("%s: take its lock: %w", what, err)
}

// busy is the error of a wait for what's lock that ended, as
// atomicfile's: commands and the controller tell it apart.
func busy(ctx context.Context, what string) error {
	if ctx.Err() != nil {
		return fmt.Errorf("stopped waiting for %s, which another agenttree process holds: %w: %w", what, atomicfile.ErrLocked, ctx.Err())
	}
	return fmt.Errorf("%s is busy: another agenttree process is working on it; try again when it is done: %w", what, atomicfile.ErrLocked)
}

// localOf is this process's turn on the lock at key.
func (s *Store) localOf(key string) chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.local[key]
	if c == nil {
		c = make(chan struct{}, 1)
		s.local[key] = c
	}
	return c
}

// sessionOf is the locks' session, made anew when the last one's lease
// ended.
func (s *Store) sessionOf(ctx context.Context) (*concurrency.Session, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.session != nil {
		select {
		case <-s.session.Done():
			s.session = nil
		default:
			return s.session, nil
		}
	}
	// The lease is granted within the caller's wait; the session then
	// keeps it alive for as long as the client lives.
	lease, err := s.cli.Grant(ctx, int64(s.ttl))
	if err != nil {
		return nil, fmt.Errorf("etcd lease for the issues' locks: %w", err)
	}
	sess, err := concurrency.NewSession(s.cli, concurrency.WithTTL(s.ttl), concurrency.WithLease(lease.ID))
	if err != nil {
		return nil, fmt.Errorf("etcd session for the issues' locks: %w", err)
	}
	s.session = sess
	return sess, nil
}

// dropSession ends sess, if it is still the locks' session.
func (s *Store) dropSession(sess *concurrency.Session) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.session == sess {
		s.session = nil
	}
	_ = sess.Close()
}
