package etcdstore

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/agenttree/agenttree/engine/issues/backend"
)

var _ backend.Watcher = (*Store)(nil)

// Watch watches P/issues/ and P/ids/ from the revision it reads first,
// and names the issue of each key changed. A watch the cluster ends (a
// member lost, the connection cut) is made again from the revision after
// the last event told, so nothing is missed; lost is called only when
// etcd no longer has that revision (compacted), since what happened in
// between is then not known. It returns when ctx ends or the client is
// closed.
func (s *Store) Watch(ctx context.Context, ready func(), changed func(id int), lost func()) error {
	resp, err := s.cli.Get(ctx, s.lastIDKey())
	if err != nil {
		return fmt.Errorf("watch the issues: %w", err)
	}
	rev := resp.Header.Revision + 1
	ready()
	for ctx.Err() == nil && s.cli.Ctx().Err() == nil {
		wctx, cancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
		for w := range s.cli.Watch(wctx, s.p+"/", clientv3.WithPrefix(), clientv3.WithRev(rev)) {
			if w.CompactRevision > rev {
				rev = w.CompactRevision // what came before is gone
				lost()
			}
			if w.Err() != nil {
				break
			}
			for _, ev := range w.Events {
				if id := s.idOfKey(string(ev.Kv.Key)); id > 0 {
					changed(id)
				}
				rev = ev.Kv.ModRevision + 1
			}
		}
		cancel()
		select { // a cluster out of reach is not asked again at once
		case <-ctx.Done():
		case <-s.cli.Ctx().Done():
		case <-time.After(time.Second):
		}
	}
	return nil
}

// idOfKey is the issue a key under P/issues/ or P/ids/ belongs to; 0 for
// any other key.
func (s *Store) idOfKey(key string) int {
	for _, p := range []string{s.p + "/issues/", s.idsPrefix()} {
		if rest, ok := strings.CutPrefix(key, p); ok {
			n, _, _ := strings.Cut(rest, "/")
			id, err := strconv.Atoi(n)
			if err != nil {
				return 0
			}
			return id
		}
	}
	return 0
}
