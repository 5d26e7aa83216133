package etcdstore

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/agenttree/agenttree/engine/issues/backend"
)

var _ backend.Porter = (*Store)(nil)

// Export reads issue id's keys at one revision.
func (s *Store) Export(ctx context.Context, id int) (backend.Whole, error) {
	resp, err := s.cli.Get(ctx, s.issuePrefix(id), clientv3.WithPrefix(), clientv3.WithSort(clientv3.SortByKey, clientv3.SortAscend))
	if err != nil {
		return backend.Whole{}, fmt.Errorf("issue %d: %w", id, err)
	}
	w := backend.Whole{ID: id}
	var log bytes.Buffer
	head := false
	for _, kv := range resp.Kvs {
		key, v := string(kv.Key), value(kv.Value)
		switch {
		case key == s.stateKey(id):
			w.State = v
		case key == s.watchKey(id):
			w.Watch = v
		case key == s.headKey(id):
			head = true
		case strings.HasPrefix(key, s.linesPrefix(id)):
			log.Write(kv.Value)
		case strings.HasPrefix(key, s.asideKey(id, "")):
			if w.Aside == nil {
				w.Aside = map[string][]byte{}
			}
			w.Aside[strings.TrimPrefix(key, s.asideKey(id, ""))] = v
		}
	}
	if head || log.Len() > 0 {
		w.Log = log.Bytes()
	}
	return w, nil
}

// value is a value read, never nil: an empty value is a key there.
func value(v []byte) []byte {
	if v == nil {
		return []byte{}
	}
	return v
}

// importBatch is how many keys one transaction of Import puts: etcd
// refuses a transaction of more than 128 operations by default.
const importBatch = 100

// Import replaces issue w.ID's keys under its lock: the old keys deleted
// (but its outbox's, which is not its state), the log's lines put in
// transactions of importBatch keys, then the head, state, watch, records
// set aside and the id's key in a last one.
// Until that last one, the issue is not listed (IDs), and an Import again
// starts over.
func (s *Store) Import(ctx context.Context, w backend.Whole, timeout time.Duration) error {
	h, err := s.lock(ctx, s.issueLock(w.ID), timeout, fmt.Sprintf("issue %d", w.ID))
	if err != nil {
		return err
	}
	defer h.Unlock()
	// etcd refuses a transaction that deletes a key and puts it again.
	if err := s.fenced(ctx, h, append([]clientv3.Op{clientv3.OpDelete(s.idKey(w.ID))}, s.notOutbox(w.ID)...)); err != nil {
		return fmt.Errorf("issue %d: clear it for the import: %w", w.ID, err)
	}
	var ops []clientv3.Op
	n := 0
	for rest := w.Log; len(rest) > 0; {
		line := rest
		if i := bytes.IndexByte(rest, '\n'); i >= 0 {
			line = rest[:i+1]
		}
		rest = rest[len(line):]
		n++
		ops = append(ops, clientv3.OpPut(s.lineKey(w.ID, n), string(line)))
		if len(ops) >= importBatch {
			if err := s.fenced(ctx, h, ops); err != nil {
				return fmt.Errorf("issue %d: import its log: %w", w.ID, err)
			}
			ops = nil
		}
	}
	if w.Log != nil {
		ops = append(ops, clientv3.OpPut(s.headKey(w.ID), strconv.Itoa(n)))
	}
	for key, v := range map[string][]byte{s.stateKey(w.ID): w.State, s.watchKey(w.ID): w.Watch} {
		if v != nil {
			ops = append(ops, clientv3.OpPut(key, string(v)))
		}
	}
	for name, v := range w.Aside {
		ops = append(ops, clientv3.OpPut(s.asideKey(w.ID, name), string(v)))
	}
	ops = append(ops, clientv3.OpPut(s.idKey(w.ID), ""))
	if err := s.fenced(ctx, h, ops); err != nil {
		return fmt.Errorf("issue %d: import it: %w", w.ID, err)
	}
	return nil
}

// fenced makes ops in one transaction if h still holds its lock.
func (s *Store) fenced(ctx context.Context, h *held, ops []clientv3.Op) error {
	resp, err := s.cli.Txn(ctx).If(h.owner()...).Then(ops...).Commit()
	if err == nil && !resp.Succeeded {
		err = errFenced
	}
	return err
}

// KeepLastID puts P/last-id under the issue list's lock, unless it holds
// n or more.
func (s *Store) KeepLastID(ctx context.Context, n int) error {
	list, err := s.lock(ctx, s.listLock(), s.timeout, "the issue list")
	if err != nil {
		return err
	}
	defer list.Unlock()
	if last, err := s.LastID(ctx); err != nil || last >= n {
		return err
	}
	if err := s.fenced(ctx, list, []clientv3.Op{clientv3.OpPut(s.lastIDKey(), strconv.Itoa(n))}); err != nil {
		return fmt.Errorf("record the last id: %w", err)
	}
	return nil
}
