package etcdnodes

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/agenttree/agenttree/controller/nodes"
	"github.com/agenttree/agenttree/internal/textsafe"
)

// Member is this process among the nodes while its lease lasts.
type Member struct {
	r     *Registry
	lease clientv3.LeaseID
	stop  context.CancelFunc
	done  chan struct{}
}

// Join names n among the nodes alive, on a lease of ttl (DefaultTTL when
// zero) kept alive until ctx ends or Leave. A node alive of the same
// name (another host, or this one's last run, whose lease has not ended)
// is ErrTaken: two nodes of one name would both start the agents given
// to it.
func (r *Registry) Join(ctx context.Context, n nodes.Node, ttl time.Duration) (*Member, error) {
	if err := nodes.ValidName(n.Name); err != nil {
		return nil, err
	}
	if ttl <= 0 {
		ttl = nodes.DefaultTTL
	}
	lease, err := r.cli.Grant(ctx, int64(ttl/time.Second))
	if err != nil {
		return nil, fmt.Errorf("etcd lease for node %s: %w", n.Name, err)
	}
	data, err := json.Marshal(n)
	if err != nil {
		return nil, err
	}
	key := r.nodeKey(n.Name)
	resp, err := r.cli.Txn(ctx).If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0)).
		Then(clientv3.OpPut(key, string(data), clientv3.WithLease(lease.ID))).
		Else(clientv3.OpGet(key)).Commit()
	if err == nil && !resp.Succeeded {
		err = taken(n.Name, resp)
	}
	if err != nil {
		r.revoke(lease.ID)
		return nil, err
	}
	kctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	alive, err := r.cli.KeepAlive(kctx, lease.ID)
	if err != nil {
		stop()
		r.revoke(lease.ID)
		return nil, fmt.Errorf("keep node %s's lease: %w", n.Name, err)
	}
	m := &Member{r: r, lease: lease.ID, stop: stop, done: make(chan struct{})}
	go func() {
		defer close(m.done)
		for range alive { // closed when the lease ends or cannot be renewed
		}
	}()
	go func() {
		select {
		case <-ctx.Done():
			m.Leave()
		case <-m.done:
		}
	}()
	return m, nil
}

// taken is ErrTaken, with who has the name.
func taken(name string, resp *clientv3.TxnResponse) error {
	who := "its lease has not ended"
	if rs := resp.Responses; len(rs) > 0 && len(rs[0].GetResponseRange().Kvs) > 0 {
		var n nodes.Node
		if json.Unmarshal(rs[0].GetResponseRange().Kvs[0].Value, &n) == nil {
			who = fmt.Sprintf("%s, since %s", textsafe.Line(n.Host, 200), n.Since.Format(time.RFC3339))
		}
	}
	return fmt.Errorf("node %s: %w (%s): stop that one, or name this one otherwise with --name", name, nodes.ErrTaken, who)
}

// Done is closed when the lease ended: the node is no longer among the
// live ones, and must join again.
func (m *Member) Done() <-chan struct{} { return m.done }

// Leave takes the node out at once: its lease revoked.
func (m *Member) Leave() {
	m.stop()
	m.r.revoke(m.lease)
}

func (r *Registry) revoke(id clientv3.LeaseID) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	_, _ = r.cli.Revoke(ctx, id)
}
