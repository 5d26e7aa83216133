package etcdtest

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"
)

// Members is a cluster of several members in the test's process, plain
// (no TLS), each of which can be stopped and started again: a member
// lost, or a quorum.
type Members struct {
	// Endpoints are the members' client URLs, in order.
	Endpoints []string

	t    testing.TB
	mu   sync.Mutex
	cfgs []*embed.Config
	etcd []*embed.Etcd
}

// StartMembers starts a cluster of n members and waits until it has a
// leader; they stop when the test ends.
func StartMembers(t testing.TB, n int) *Members {
	t.Helper()
	var lastErr error
	for range 3 { // a port taken between freeURL and the listens: again
		m := &Members{t: t}
		if lastErr = m.start(n); lastErr == nil {
			t.Cleanup(m.stopAll)
			return m
		}
		m.stopAll()
	}
	t.Fatalf("start an embedded etcd cluster of %d: %v", n, lastErr)
	return nil
}

func (m *Members) start(n int) error {
	var peers []string
	for i := range n {
		client, peer := freeURL(m.t, "http"), freeURL(m.t, "http")
		cfg := memberConfig(m.t, fmt.Sprintf("m%d", i), client, peer)
		cfg.InitialClusterToken = "etcdtest"
		peers = append(peers, cfg.Name+"="+peer.String())
		m.cfgs = append(m.cfgs, cfg)
		m.Endpoints = append(m.Endpoints, client.String())
	}
	m.etcd = make([]*embed.Etcd, n)
	for i, cfg := range m.cfgs {
		cfg.InitialCluster = strings.Join(peers, ",")
		e, err := embed.StartEtcd(cfg)
		if err != nil {
			return err
		}
		m.etcd[i] = e
	}
	for i := range m.etcd {
		if err := m.ready(i); err != nil {
			return err
		}
	}
	return nil
}

// ready waits until member i serves.
func (m *Members) ready(i int) error {
	select {
	case <-m.etcd[i].Server.ReadyNotify():
		return nil
	case <-time.After(60 * time.Second):
		return fmt.Errorf("member %d was not ready in 60s", i)
	}
}

// Stop stops member i, as a host that went away.
func (m *Members) Stop(i int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.etcd[i] != nil {
		m.etcd[i].Close()
		m.etcd[i] = nil
	}
}

// Restart starts member i again on its data, its URLs the same; it
// returns once it listens (it serves once it has a quorum again).
func (m *Members) Restart(i int) {
	m.t.Helper()
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.etcd[i] != nil {
		return
	}
	var err error
	for range 50 { // its ports may linger a moment after its stop
		var e *embed.Etcd
		if e, err = embed.StartEtcd(m.cfgs[i]); err == nil {
			m.etcd[i] = e
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	m.t.Fatalf("start member %d again: %v", i, err)
}

func (m *Members) stopAll() {
	for i := range m.etcd {
		m.Stop(i)
	}
}

// Client is a client of every member, closed when the test ends.
func (m *Members) Client(t testing.TB) *clientv3.Client {
	t.Helper()
	cli, err := clientv3.New(clientv3.Config{Endpoints: m.Endpoints, DialTimeout: 10 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close() })
	return cli
}

// Leader is the index of the member that is the cluster's raft leader.
func (m *Members) Leader(t testing.TB) int {
	t.Helper()
	cli := m.Client(t)
	for i, ep := range m.Endpoints {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		st, err := cli.Status(ctx, ep)
		cancel()
		if err == nil && st.Leader == st.Header.MemberId {
			return i
		}
	}
	t.Fatal("no member of the cluster is its leader")
	return -1
}
