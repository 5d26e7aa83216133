package etcdstore

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/agenttree/agenttree/chain"
	"github.com/agenttree/agenttree/engine/issues/backend"
)

// head is the log's head as read: the last line's number and the head
// key's mod revision (0: no head).
type head struct {
	n   int
	rev int64
}

func (s *Store) readHead(ctx context.Context, id int) (head, error) {
	resp, err := s.cli.Get(ctx, s.headKey(id))
	if err != nil {
		return head{}, fmt.Errorf("issue %d: read its log's head: %w", id, err)
	}
	if len(resp.Kvs) == 0 {
		return head{}, nil
	}
	n, _ := strconv.Atoi(string(resp.Kvs[0].Value))
	return head{n: n, rev: resp.Kvs[0].ModRevision}, nil
}

// Commit puts w's line, the head and the state in one transaction, if h
// still holds the lock and the head is as read: logged and stored
// together, or neither.
func (s *Store) Commit(ctx context.Context, h backend.Held, w backend.Write) (bool, error) {
	mine, err := heldOf(h)
	if err != nil {
		return false, err
	}
	return s.commit(ctx, mine, w)
}

func (s *Store) commit(ctx context.Context, h *held, w backend.Write) (bool, error) {
	if w.Line == nil {
		resp, err := s.cli.Txn(ctx).If(h.owner()...).Then(clientv3.OpPut(s.stateKey(w.ID), string(w.State))).Commit()
		if err == nil && !resp.Succeeded {
			err = errFenced
		}
		if err != nil {
			return false, fmt.Errorf("issue %d: write its state: %w", w.ID, err)
		}
		return false, nil
	}
	hd, err := s.readHead(ctx, w.ID)
	if err != nil {
		return false, err
	}
	next := hd.n + 1
	resp, err := s.cli.Txn(ctx).
		If(h.owner(clientv3.Compare(clientv3.ModRevision(s.headKey(w.ID)), "=", hd.rev))...).
		Then(
			clientv3.OpPut(s.lineKey(w.ID, next), string(w.Line)),
			clientv3.OpPut(s.headKey(w.ID), strconv.Itoa(next)),
			clientv3.OpPut(s.stateKey(w.ID), string(w.State)),
		).Commit()
	if err == nil && !resp.Succeeded {
		err = errFenced
	}
	if err != nil {
		// A transaction either happened or not; one whose answer was
		// lost is found out by the next Lock's head check.
		return false, fmt.Errorf("issue %d: log the change: %w", w.ID, err)
	}
	return true, nil
}

// Create takes the issue list's lock, gives the next id with a
// compare-and-swap on P/last-id, and writes the first write under the
// new issue's lock.
func (s *Store) Create(ctx context.Context, timeout time.Duration, first func(id int) (backend.Write, error)) (int, error) {
	list, err := s.lock(ctx, s.listLock(), timeout, "the issue list")
	if err != nil {
		return 0, err
	}
	defer list.Unlock()
	next, err := s.allocate(ctx, list)
	if err != nil {
		return 0, err
	}
	h, err := s.lock(ctx, s.issueLock(next), timeout, fmt.Sprintf("issue %d", next))
	if err != nil {
		s.giveBack(ctx, list, next)
		return 0, err
	}
	defer h.Unlock()
	w, err := first(next)
	if err != nil {
		s.giveBack(ctx, list, next)
		return 0, err
	}
	if logged, err := s.commit(ctx, h, w); err != nil {
		if !logged {
			s.giveBack(ctx, list, next)
			return 0, err
		}
		return next, err
	}
	return next, nil
}

// allocate records the next id, above the last given and every id
// listed, while list is held.
func (s *Store) allocate(ctx context.Context, list *held) (int, error) {
	resp, err := s.cli.Txn(ctx).Then(
		clientv3.OpGet(s.lastIDKey()),
		clientv3.OpGet(s.idsPrefix(), clientv3.WithPrefix(), clientv3.WithKeysOnly(),
			clientv3.WithSort(clientv3.SortByKey, clientv3.SortDescend), clientv3.WithLimit(1)),
	).Commit()
	if err != nil {
		return 0, fmt.Errorf("read the last id: %w", err)
	}
	last, rev := 0, int64(0)
	if kvs := resp.Responses[0].GetResponseRange().Kvs; len(kvs) > 0 {
		last, _ = strconv.Atoi(string(kvs[0].Value))
		rev = kvs[0].ModRevision
	}
	next := last + 1
	if kvs := resp.Responses[1].GetResponseRange().Kvs; len(kvs) > 0 {
		if id, err := strconv.Atoi(string(bytes.TrimPrefix(kvs[0].Key, []byte(s.idsPrefix())))); err == nil {
			next = max(next, id+1)
		}
	}
	// Remembered apart from the issues, so the id of an issue removed
	// later is never given to another (as .last-id is in files).
	put, err := s.cli.Txn(ctx).
		If(list.owner(clientv3.Compare(clientv3.ModRevision(s.lastIDKey()), "=", rev))...).
		Then(clientv3.OpPut(s.lastIDKey(), strconv.Itoa(next)), clientv3.OpPut(s.idKey(next), "")).
		Commit()
	if err == nil && !put.Succeeded {
		err = errFenced
	}
	if err != nil {
		return 0, fmt.Errorf("give issue %d its id: %w", next, err)
	}
	return next, nil
}

// giveBack undoes the allocation of id, which logged nothing: it was
// never an issue's, so it is given to the next Create and never listed
// as missing. Were it not given back, it stays as one being created.
func (s *Store) giveBack(ctx context.Context, list *held, id int) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.timeout)
	defer cancel()
	_, _ = s.cli.Txn(ctx).
		If(list.owner(clientv3.Compare(clientv3.Value(s.lastIDKey()), "=", strconv.Itoa(id)))...).
		Then(
			clientv3.OpPut(s.lastIDKey(), strconv.Itoa(id-1)),
			clientv3.OpDelete(s.idKey(id)),
			clientv3.OpDelete(s.issuePrefix(id), clientv3.WithPrefix()),
		).Commit()
}

// WriteWatch puts issue id's watch key, if h still holds the lock.
func (s *Store) WriteWatch(ctx context.Context, h backend.Held, id int, data []byte) error {
	mine, err := heldOf(h)
	if err != nil {
		return err
	}
	resp, err := s.cli.Txn(ctx).If(mine.owner()...).Then(clientv3.OpPut(s.watchKey(id), string(data))).Commit()
	if err == nil && !resp.Succeeded {
		err = errFenced
	}
	if err != nil {
		return fmt.Errorf("issue %d: write its watch: %w", id, err)
	}
	return nil
}

// DropTorn deletes the last line key when it is the incomplete line t
// found, unchanged since.
func (s *Store) DropTorn(ctx context.Context, h backend.Held, id int, t chain.Tail) error {
	if t.Torn == 0 {
		return nil
	}
	mine, err := heldOf(h)
	if err != nil {
		return err
	}
	resp, err := s.cli.Get(ctx, s.linesPrefix(id), clientv3.WithPrefix(),
		clientv3.WithSort(clientv3.SortByKey, clientv3.SortDescend), clientv3.WithLimit(1))
	if err != nil {
		return fmt.Errorf("issue %d: read its log: %w", id, err)
	}
	if len(resp.Kvs) == 0 {
		return nil
	}
	kv := resp.Kvs[0]
	if bytes.HasSuffix(kv.Value, []byte("\n")) || int64(len(kv.Value)) != t.Torn {
		return fmt.Errorf("issue %d: its log's incomplete last line changed since it was read", id)
	}
	del, err := s.cli.Txn(ctx).
		If(mine.owner(clientv3.Compare(clientv3.ModRevision(string(kv.Key)), "=", kv.ModRevision))...).
		Then(clientv3.OpDelete(string(kv.Key))).Commit()
	if err == nil && !del.Succeeded {
		err = errFenced
	}
	if err != nil {
		return fmt.Errorf("issue %d: drop the incomplete last line of its log: %w", id, err)
	}
	return nil
}
