package etcdstore

import (
	"bytes"
	"context"
	"fmt"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/agenttree/agenttree/chain"
)

// lines are issue id's log as the store's checks read it
// (eventlog.Lines): its line keys, in key order, read as the file
// events.jsonl would be. A value without its "\n" is an incomplete line,
// as in a file: no commit writes one (a line's key is put whole), but
// whoever writes the keys by hand can, and it reads the same as there.
// Offsets and sizes are left zero: only the files' DropTorn needs them.
type lines struct {
	s  *Store
	id int
}

// Tail reads the head and the last two line keys at one revision.
func (l lines) Tail() (chain.Tail, error) {
	ctx, cancel := context.WithTimeout(context.Background(), l.s.timeout)
	defer cancel()
	resp, err := l.s.cli.Txn(ctx).Then(
		clientv3.OpGet(l.s.headKey(l.id), clientv3.WithCountOnly()),
		clientv3.OpGet(l.s.linesPrefix(l.id), clientv3.WithPrefix(),
			clientv3.WithSort(clientv3.SortByKey, clientv3.SortDescend), clientv3.WithLimit(2)),
	).Commit()
	if err != nil {
		return chain.Tail{}, fmt.Errorf("issue %d: read its log: %w", l.id, err)
	}
	kvs := resp.Responses[1].GetResponseRange().Kvs
	if count(resp, 0) == 0 && len(kvs) == 0 {
		return chain.Tail{}, errNoLog(l.id)
	}
	var t chain.Tail
	if len(kvs) > 0 && !bytes.HasSuffix(kvs[0].Value, []byte("\n")) {
		t.Torn = int64(len(kvs[0].Value))
		kvs = kvs[1:]
	}
	if len(kvs) == 0 {
		return t, nil
	}
	line, err := chain.Parse(bytes.TrimSuffix(kvs[0].Value, []byte("\n")))
	if err != nil {
		return t, &chain.Error{Err: err}
	}
	t.Last = line
	return t, nil
}

// Verify reads every line key, in order, and checks them as a file's
// lines are checked (chain.Verify).
func (l lines) Verify() ([]chain.Line, error) {
	ctx, cancel := context.WithTimeout(context.Background(), l.s.timeout)
	defer cancel()
	resp, err := l.s.cli.Txn(ctx).Then(
		clientv3.OpGet(l.s.headKey(l.id), clientv3.WithCountOnly()),
		clientv3.OpGet(l.s.linesPrefix(l.id), clientv3.WithPrefix(),
			clientv3.WithSort(clientv3.SortByKey, clientv3.SortAscend)),
	).Commit()
	if err != nil {
		return nil, fmt.Errorf("issue %d: read its log: %w", l.id, err)
	}
	kvs := resp.Responses[1].GetResponseRange().Kvs
	if count(resp, 0) == 0 && len(kvs) == 0 {
		return nil, errNoLog(l.id)
	}
	var all bytes.Buffer
	for _, kv := range kvs {
		all.Write(kv.Value)
	}
	return chain.Verify(&all)
}
