package leader_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/agenttree/agenttree/controller/leader"
	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/engine/issues/etcdstore"
	"github.com/agenttree/agenttree/engine/issues/etcdstore/etcdtest"
)

func newClient(t *testing.T, endpoint string) *clientv3.Client {
	t.Helper()
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{endpoint}, DialTimeout: 10 * time.Second, Logger: zap.NewNop()})
	require.NoError(t, err)
	t.Cleanup(func() { cli.Close() })
	return cli
}

const prefix = "/agenttree/test/leader"

// Two controllers campaign: one is elected, the other waits, told who
// leads; the first resigns and the second is elected at once, without
// waiting for the first's lease to run out.
func TestOneIsElectedAndTheOtherFollowsAtOnce(t *testing.T) {
	c := etcdtest.Start(t)
	ctx := context.Background()
	first, err := leader.Campaign(ctx, leader.Config{Client: newClient(t, c.Endpoint), Prefix: prefix, Name: "host-a 1"}, nil)
	require.NoError(t, err)
	require.NoError(t, first.Held(ctx))

	var mu sync.Mutex
	var told []string
	got := make(chan *leader.Term, 1)
	go func() {
		second, err := leader.Campaign(ctx, leader.Config{Client: newClient(t, c.Endpoint), Prefix: prefix, Name: "host-b 2"},
			func(who string) { mu.Lock(); told = append(told, who); mu.Unlock() })
		assert.NoError(t, err)
		got <- second
	}()
	require.Eventually(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(told) > 0 }, 30*time.Second, 20*time.Millisecond)
	mu.Lock()
	assert.Equal(t, "host-a 1", told[0], "the standby is told who leads")
	mu.Unlock()
	select {
	case <-got:
		t.Fatal("a second controller was elected while the first leads")
	case <-time.After(500 * time.Millisecond):
	}
	who, err := leader.Leader(ctx, newClient(t, c.Endpoint), prefix)
	require.NoError(t, err)
	assert.Equal(t, "host-a 1", who)

	resigned := time.Now()
	require.NoError(t, first.Resign(ctx))
	require.ErrorIs(t, first.Held(ctx), leader.ErrLost)
	var second *leader.Term
	select {
	case second = <-got:
	case <-time.After(30 * time.Second):
		t.Fatal("the standby was not elected after the leader resigned")
	}
	assert.Less(t, time.Since(resigned), leader.DefaultTTL, "elected before the first's lease could have run out")
	require.NoError(t, second.Held(ctx))
	assert.Greater(t, second.Rev(), first.Rev())
	require.NoError(t, second.Resign(ctx))
}

// A leader whose lease ends (revoked here, as etcd does when it expires)
// loses its term: Done closes, Held says ErrLost, and its store, fenced by
// the leader's key, writes nothing more, though it still holds the
// issue's lock.
func TestALeaderWhoseLeaseEndsWritesNothing(t *testing.T) {
	c := etcdtest.Start(t)
	ctx := context.Background()
	cli := newClient(t, c.Endpoint)
	term, err := leader.Campaign(ctx, leader.Config{Client: cli, Prefix: prefix, Name: "host-a 1"}, nil)
	require.NoError(t, err)
	b := etcdstore.New(cli, "/agenttree/test/state")
	t.Cleanup(func() { b.Close() })
	b.Fence(term.Key(), term.Rev())
	st, err := issues.OpenWith(t.TempDir(), b)
	require.NoError(t, err)
	iss, err := st.Create(ctx, &issues.Issue{Title: "Fenced", Slug: "fenced", Flow: "default", Stage: "implement.code"}, "human")
	require.NoError(t, err)

	lease, err := cli.Get(ctx, term.Key())
	require.NoError(t, err)
	require.Len(t, lease.Kvs, 1)
	_, err = cli.Revoke(ctx, clientv3.LeaseID(lease.Kvs[0].Lease))
	require.NoError(t, err)
	select {
	case <-term.Done():
	case <-time.After(30 * time.Second):
		t.Fatal("the term did not end with its lease")
	}
	require.ErrorIs(t, term.Held(ctx), leader.ErrLost)

	_, err = st.Update(ctx, iss.ID, iss.Version, func(i *issues.Issue) error { i.Title = "Written after the term"; return nil })
	require.Error(t, err, "a write after the term ended")
	got, err := st.Get(iss.ID)
	require.NoError(t, err)
	assert.Equal(t, "Fenced", got.Title)
	assert.Equal(t, iss.Version, got.Version)
	_ = term.Resign(ctx)
}

// A leader cut off from the cluster stops acting before its lease can
// have expired there: Held says ErrLost within two thirds of the lease
// after the last renewal, though nothing told it the lease is gone.
func TestALeaderCutOffStopsBeforeItsLeaseEnds(t *testing.T) {
	c := etcdtest.Start(t)
	ctx := context.Background()
	ttl := 3 * time.Second
	term, err := leader.Campaign(ctx, leader.Config{Client: newClient(t, c.Endpoint), Prefix: prefix, Name: "host-a 1", TTL: ttl}, nil)
	require.NoError(t, err)
	require.NoError(t, term.Held(ctx))
	// The member answers renewals until its stop is done (it drains its
	// streams first): the cut is when the stop returns.
	c.Stop()
	cut := time.Now()
	select {
	case <-term.Done():
	case <-time.After(30 * time.Second):
		t.Fatal("the term outlived its lease")
	}
	assert.True(t, errors.Is(term.Held(ctx), leader.ErrLost))
	assert.Less(t, time.Since(cut), ttl, "stopped before the lease, renewed just before the cut at most, ran out")
}

// A cluster of three that loses the member leading it elects another
// member within etcd's own election: the term goes on, Held never saying
// no, and the standby is not elected.
func TestATermOutlivesTheLossOfOneMemberOfThree(t *testing.T) {
	m := etcdtest.StartMembers(t, 3)
	ctx := context.Background()
	term, err := leader.Campaign(ctx, leader.Config{Client: m.Client(t), Prefix: prefix, Name: "host-a 1"}, nil)
	require.NoError(t, err)
	standby := make(chan *leader.Term, 1)
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	other := m.Client(t)
	go func() {
		// As `agenttree controller` does, the standby campaigns again
		// when a campaign fails: a request may time out while the
		// members elect their own leader.
		for sctx.Err() == nil {
			if term, err := leader.Campaign(sctx, leader.Config{Client: other, Prefix: prefix, Name: "host-b 2"}, nil); err == nil {
				standby <- term
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	}()
	m.Stop(m.Leader(t))
	for end := time.Now().Add(leader.DefaultTTL + 2*time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		require.NoError(t, term.Held(ctx), "the term ended with one member of three")
	}
	select {
	case <-standby:
		t.Fatal("the standby was elected while the leader's term lasts")
	default:
	}
	require.NoError(t, term.Resign(ctx))
}

// A standby whose lease ends while it waits (cut off, or frozen, longer
// than its lease) is told at once, not elected later on a key that is
// gone: its campaign ends with ErrLost.
func TestAStandbyWhoseLeaseEndsIsNotElected(t *testing.T) {
	c := etcdtest.Start(t)
	ctx := context.Background()
	cli := newClient(t, c.Endpoint)
	first, err := leader.Campaign(ctx, leader.Config{Client: cli, Prefix: prefix, Name: "host-a 1"}, nil)
	require.NoError(t, err)
	got := make(chan error, 1)
	other := newClient(t, c.Endpoint)
	go func() {
		term, err := leader.Campaign(ctx, leader.Config{Client: other, Prefix: prefix, Name: "host-b 2"}, nil)
		if term != nil {
			_ = term.Resign(ctx)
		}
		got <- err
	}()
	var standby clientv3.LeaseID
	require.Eventually(t, func() bool {
		resp, err := cli.Get(ctx, prefix+"/", clientv3.WithPrefix(), clientv3.WithSort(clientv3.SortByCreateRevision, clientv3.SortAscend))
		if err != nil || len(resp.Kvs) < 2 {
			return false
		}
		standby = clientv3.LeaseID(resp.Kvs[1].Lease)
		return true
	}, 30*time.Second, 20*time.Millisecond)
	_, err = cli.Revoke(ctx, standby)
	require.NoError(t, err)
	select {
	case err := <-got:
		require.ErrorIs(t, err, leader.ErrLost)
	case <-time.After(30 * time.Second):
		t.Fatal("the standby's campaign went on with its lease gone")
	}
	require.NoError(t, first.Held(ctx))
	require.NoError(t, first.Resign(ctx))
}

// What runs within a term is cancelled when it ends, ErrLost its cause.
func TestWithinATermEndsWithIt(t *testing.T) {
	c := etcdtest.Start(t)
	ctx := context.Background()
	term, err := leader.Campaign(ctx, leader.Config{Client: newClient(t, c.Endpoint), Prefix: prefix, Name: "host-a 1"}, nil)
	require.NoError(t, err)
	within, cancel := term.Within(ctx)
	defer cancel()
	require.NoError(t, within.Err())
	require.NoError(t, term.Resign(ctx))
	select {
	case <-within.Done():
		assert.ErrorIs(t, context.Cause(within), leader.ErrLost)
	case <-time.After(30 * time.Second):
		t.Fatal("the work went on after the term")
	}
}
