package etcdstore

import (
	"context"
	"fmt"
	"strconv"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/agenttree/agenttree/engine/issues/backend"
)

// SetAside appends the lines from fromLine on to the record key name
// under the issue, deletes their keys and moves the head back, in one
// transaction: if h still holds the lock and neither the head nor the
// record changed since they were read. Three operations whatever the
// lines' number: the record is one value (etcd's request size bounds it,
// 1.5 MiB by default), the lines go in one range delete.
func (s *Store) SetAside(ctx context.Context, h backend.Held, id int, fromLine int, name string) (int, error) {
	mine, err := heldOf(h)
	if err != nil {
		return 0, err
	}
	aside := s.asideKey(id, name)
	resp, err := s.cli.Txn(ctx).Then(
		clientv3.OpGet(s.headKey(id)),
		clientv3.OpGet(s.linesPrefix(id), clientv3.WithPrefix(), clientv3.WithSort(clientv3.SortByKey, clientv3.SortAscend)),
		clientv3.OpGet(aside),
	).Commit()
	if err != nil {
		return 0, fmt.Errorf("issue %d: read its log: %w", id, err)
	}
	heads, lines, kept := resp.Responses[0].GetResponseRange().Kvs, resp.Responses[1].GetResponseRange().Kvs, resp.Responses[2].GetResponseRange().Kvs
	if len(heads) == 0 && len(lines) == 0 {
		return 0, errNoLog(id)
	}
	from := max(fromLine, 1) - 1
	if from >= len(lines) {
		return 0, nil
	}
	var record []byte
	var headRev, asideRev int64
	if len(heads) > 0 {
		headRev = heads[0].ModRevision
	}
	if len(kept) > 0 {
		record, asideRev = kept[0].Value, kept[0].ModRevision
	}
	for _, kv := range lines[from:] {
		record = append(record, kv.Value...)
	}
	cut := clientv3.OpDelete(string(lines[from].Key), clientv3.WithRange(clientv3.GetPrefixRangeEnd(s.linesPrefix(id))))
	headNow := 0
	if from > 0 {
		headNow, _ = strconv.Atoi(string(lines[from-1].Key[len(s.linesPrefix(id)):]))
	}
	put, err := s.cli.Txn(ctx).
		If(mine.owner(
			clientv3.Compare(clientv3.ModRevision(s.headKey(id)), "=", headRev),
			clientv3.Compare(clientv3.ModRevision(aside), "=", asideRev))...).
		Then(clientv3.OpPut(aside, string(record)), cut, clientv3.OpPut(s.headKey(id), strconv.Itoa(headNow))).
		Commit()
	if err == nil && !put.Succeeded {
		err = errFenced
	}
	if err != nil {
		return 0, fmt.Errorf("issue %d: set lines of its log aside in %s: %w", id, name, err)
	}
	return len(lines) - from, nil
}
