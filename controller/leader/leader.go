// Package leader elects one controller among those that share an etcd
// cluster (docs/ARCHITECTURE.md §8, "One controller at a time"): etcd's
// concurrency.Election on a lease of its own. The one elected holds a
// Term, which says until when it may act: a few seconds short of the
// lease's end as this process last saw it renewed, so it stops before any
// other can be elected. Its store writes are fenced by the leader key's
// revision in the same transaction (etcdstore.Store.Fence); its other
// side effects ask the Term first (forge.Fenced, the controller's
// deliveries).
package leader

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
)

// DefaultTTL is the lease of a term: a controller killed while elected
// is followed by another within it.
const DefaultTTL = 10 * time.Second

// ErrLost is a term that ended: its lease expired or could not be
// renewed in time, or it was resigned.
var ErrLost = errors.New("this controller is no longer the one elected: its term's lease ended")

// Config is an election.
type Config struct {
	Client *clientv3.Client
	// Prefix is the election's keys' prefix, one per repository.
	Prefix string
	// Name is what the leader's key says of it (host and process), for
	// people and for the standbys' log.
	Name string
	// TTL is the lease, in whole seconds (DefaultTTL when zero).
	TTL time.Duration
}

// Term is a controller's time as the one elected.
type Term struct {
	sess  *concurrency.Session
	el    *concurrency.Election
	key   string
	rev   int64
	ttl   time.Duration
	until atomic.Int64 // unix nanoseconds: Held says no from then on
	done  chan struct{}
	end   sync.Once
	stop  context.CancelFunc
	// resign and resigned make Resign one call, whoever asks first.
	resign   sync.Once
	resigned error
}

// Campaign waits until this process is elected, or ctx ends. waiting,
// when not nil, is told who leads while it waits (once per leader).
func Campaign(ctx context.Context, c Config, waiting func(leader string)) (*Term, error) {
	ttl := c.TTL
	if ttl <= 0 {
		ttl = DefaultTTL
	}
	secs := int64(ttl / time.Second)
	lease, err := c.Client.Grant(ctx, secs)
	if err != nil {
		return nil, fmt.Errorf("etcd lease for the controllers' election: %w", err)
	}
	sess, err := concurrency.NewSession(c.Client, concurrency.WithTTL(int(secs)), concurrency.WithLease(lease.ID))
	if err != nil {
		return nil, fmt.Errorf("etcd session for the controllers' election: %w", err)
	}
	el := concurrency.NewElection(sess, c.Prefix)
	if waiting != nil {
		wctx, stopWatch := context.WithCancel(ctx)
		defer stopWatch()
		go tellLeaders(wctx, el, c.Name, waiting)
	}
	// Campaign does not watch the session: a standby cut off longer than
	// its lease would wait on with its key gone, and then be told it
	// leads. Its campaign ends with the session instead.
	cctx, stopCampaign := context.WithCancel(ctx)
	go func() {
		select {
		case <-sess.Done():
			stopCampaign()
		case <-cctx.Done():
		}
	}()
	err = el.Campaign(cctx, c.Name)
	stopCampaign()
	if err == nil && ctx.Err() == nil {
		select {
		case <-sess.Done():
			err = ErrLost
		default:
		}
	}
	if err != nil {
		_ = sess.Close()
		if ctx.Err() == nil && errors.Is(err, context.Canceled) {
			err = ErrLost // the session ended, not the caller's wait
		}
		return nil, fmt.Errorf("campaign to be the controller: %w", err)
	}
	// Until when the term may last is learned from the cluster now: the
	// lease was renewed by the session while Campaign waited, unseen here.
	asked := time.Now()
	left, err := c.Client.TimeToLive(ctx, lease.ID)
	if err == nil && left.TTL <= 0 {
		err = ErrLost
	}
	if err != nil {
		_ = sess.Close()
		return nil, fmt.Errorf("the controller's lease, just elected: %w", err)
	}
	kctx, stop := context.WithCancel(context.Background())
	renewals, err := c.Client.KeepAlive(kctx, lease.ID)
	if err != nil {
		stop()
		_ = sess.Close()
		return nil, fmt.Errorf("keep the controller's lease: %w", err)
	}
	t := &Term{sess: sess, el: el, key: el.Key(), rev: el.Rev(), ttl: ttl, done: make(chan struct{}), stop: stop}
	t.until.Store(asked.Add(time.Duration(left.TTL)*time.Second - t.margin()).UnixNano())
	go t.keep(renewals)
	return t, nil
}

// tellLeaders tells waiting who leads, each time that changes, until ctx
// ends; not when it is self, elected.
func tellLeaders(ctx context.Context, el *concurrency.Election, self string, waiting func(string)) {
	last := ""
	for resp := range el.Observe(ctx) {
		if len(resp.Kvs) == 0 {
			continue
		}
		if who := string(resp.Kvs[0].Value); who != last && who != self {
			last = who
			waiting(who)
		}
	}
}

// margin is how long before the lease's end, as last seen renewed, the
// term stops: the renewal's answer took some time to arrive, and this
// host's clock may run slower than the cluster's.
func (t *Term) margin() time.Duration { return t.ttl / 3 }

// renewed records a renewal seen at at for ttlSecs seconds, unless the
// term has ended (until 0): an ended term never comes back.
func (t *Term) renewed(at time.Time, ttlSecs int64) {
	next := at.Add(time.Duration(ttlSecs)*time.Second - t.margin()).UnixNano()
	for {
		cur := t.until.Load()
		if cur == 0 || t.until.CompareAndSwap(cur, next) {
			return
		}
	}
}

// keep follows the lease's renewals, and ends the term when they stop
// coming in time, the session ends, or the renewals' channel closes (the
// lease is gone).
func (t *Term) keep(renewals <-chan *clientv3.LeaseKeepAliveResponse) {
	defer t.finish()
	timer := time.NewTimer(time.Until(time.Unix(0, t.until.Load())))
	defer timer.Stop()
	for {
		select {
		case r, ok := <-renewals:
			if !ok || r.TTL <= 0 {
				return
			}
			t.renewed(time.Now(), r.TTL)
			timer.Reset(time.Until(time.Unix(0, t.until.Load())))
		case <-timer.C:
			return
		case <-t.sess.Done():
			return
		case <-t.done:
			return
		}
	}
}

// finish ends the term once.
func (t *Term) finish() {
	t.end.Do(func() {
		t.until.Store(0)
		close(t.done)
	})
}

// Key is the leader's key in etcd, and Rev the revision that created
// it: the fence of the term's store writes (etcdstore.Store.Fence).
func (t *Term) Key() string { return t.key }

// Rev is the leader key's create revision.
func (t *Term) Rev() int64 { return t.rev }

// Done is closed when the term ends; the caller then Resigns, so that a
// lease still renewed does not keep the others waiting.
func (t *Term) Done() <-chan struct{} { return t.done }

// Held is nil while the term lasts, ErrLost after: asked before each side
// effect that is not a store write. It reads the clock, not the cluster.
func (t *Term) Held(context.Context) error {
	if time.Now().UnixNano() >= t.until.Load() {
		t.finish()
		return ErrLost
	}
	return nil
}

// Within is ctx, cancelled too when the term ends (ErrLost its cause):
// a side effect in flight, such as a forge request retried, stops before
// another can be elected.
func (t *Term) Within(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(ctx)
	go func() {
		select {
		case <-t.done:
			cancel(ErrLost)
		case <-ctx.Done():
		}
	}()
	return ctx, func() { cancel(context.Canceled) }
}

// Resign ends the term and hands the election over at once (the standby
// does not wait for the lease to run out).
func (t *Term) Resign(ctx context.Context) error {
	t.finish()
	t.resign.Do(func() {
		err := t.el.Resign(ctx)
		t.stop()
		t.resigned = errors.Join(err, t.sess.Close())
	})
	return t.resigned
}

// Leader is who leads the election under prefix ("" when none does):
// the value of its first key by creation, as concurrency.Election reads
// it, without a session of its own.
func Leader(ctx context.Context, cli *clientv3.Client, prefix string) (string, error) {
	resp, err := cli.Get(ctx, prefix+"/", clientv3.WithFirstCreate()...)
	if err != nil {
		return "", fmt.Errorf("who is the controller: %w", err)
	}
	if len(resp.Kvs) == 0 {
		return "", nil
	}
	return string(resp.Kvs[0].Value), nil
}
