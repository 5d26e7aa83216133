// Package outbox keeps an issue's messages to its agent (and to the
// person running the pipeline) until they are delivered: a message is
// never lost when its recipient is away or agenttree stops, and never
// delivered twice.
//
// A box keeps its bytes in a Place: a directory (Open), one JSON file per
// undelivered message, named by its ID so that a listing is oldest first,
// and the delivered ones, the last DefaultKeepSent of them, under sent/;
// or keys in etcd, when the issues' state is there
// (engine/issues/etcdstore/etcdbox). Every write is atomic.
package outbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"sync/atomic"
	"time"
)

// DefaultKeepSent is how many delivered messages a box keeps.
const DefaultKeepSent = 200

const (
	putLock     = "put"
	deliverLock = "deliver"
	// lockWait bounds the wait for another process putting or delivering:
	// a delivery takes a few seconds per message.
	lockWait = 30 * time.Second
)

// Box is one issue's outbox. Its methods are safe to call from several
// goroutines and processes at once.
type Box struct {
	place Place
	// KeepSent is how many delivered messages the box keeps, newest;
	// zero means DefaultKeepSent.
	KeepSent int
	seq      atomic.Uint32
}

// Open returns the box in dir (an issue's outbox directory). Nothing is
// created until a message is put.
func Open(dir string) *Box { return At(&dirPlace{dir: dir}) }

// At returns the box kept in p.
func At(p Place) *Box { return &Box{place: p} }

// Dir is the box's directory; "" for a box not kept in one.
func (b *Box) Dir() string {
	if d, ok := b.place.(*dirPlace); ok {
		return d.dir
	}
	return ""
}

// Place is where the box keeps its messages.
func (b *Box) Place() Place { return b.place }

// Put adds m to the box, pending, and returns it with its ID, creation
// time and state set. When m has a Key that a message in the box already
// has (in any state), nothing is added and that message is returned.
func (b *Box) Put(ctx context.Context, m Message) (Message, error) {
	if m.To == "" {
		m.To = ToAgent
	}
	if err := m.validate(); err != nil {
		return Message{}, fmt.Errorf("put a message in %s: %w", b.place, err)
	}
	// Under the lock, a key is looked up and added by one process at a
	// time, and IDs are made in the order of the clock.
	unlock, err := b.place.Lock(ctx, putLock, lockWait)
	if err != nil {
		return Message{}, err
	}
	defer unlock()
	if m.Key != "" {
		if old, ok, err := b.withKey(ctx, m.Key); err != nil || ok {
			return old, err
		}
	}
	now := timestamp()
	m.ID = newID(now, b.seq.Add(1))
	if m.Created.IsZero() {
		m.Created = now
	}
	m.Created = m.Created.UTC()
	m.State, m.Attempts, m.LastError, m.SentAt = Pending, 0, "", time.Time{}
	if err := b.write(ctx, Queued, m); err != nil {
		return Message{}, err
	}
	return m, nil
}

// Pending returns the messages not delivered yet (pending or delivering),
// oldest first. A place that waits on a network bounds each of its
// requests (etcd's: engine/issues/etcdstore/etcdbox).
func (b *Box) Pending() ([]Message, error) { return b.pending(context.Background()) }

func (b *Box) pending(ctx context.Context) ([]Message, error) {
	ids, err := b.place.IDs(ctx, Queued)
	if err != nil {
		return nil, err
	}
	var out []Message
	for _, id := range ids {
		m, err := b.load(ctx, id)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue // pruned meanwhile
		case err != nil:
			return nil, err
		case m.State != Sent:
			out = append(out, m)
		}
	}
	return out, nil
}

// Recent returns the last n messages in any state (all of them when
// n <= 0), oldest first.
func (b *Box) Recent(n int) ([]Message, error) { return b.recent(context.Background(), n) }

func (b *Box) recent(ctx context.Context, n int) ([]Message, error) {
	queued, err := b.place.IDs(ctx, Queued)
	if err != nil {
		return nil, err
	}
	sent, err := b.place.IDs(ctx, Delivered)
	if err != nil {
		return nil, err
	}
	// A message can be in both for a moment, or after a crash.
	ids := slices.Compact(slices.Sorted(slices.Values(append(sent, queued...))))
	if n > 0 && len(ids) > n {
		ids = ids[len(ids)-n:]
	}
	out := make([]Message, 0, len(ids))
	for _, id := range ids {
		m, err := b.load(ctx, id)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue
		case err != nil:
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

// withKey finds the message with key, in any state.
func (b *Box) withKey(ctx context.Context, key string) (Message, bool, error) {
	all, err := b.recent(ctx, 0)
	if err != nil {
		return Message{}, false, err
	}
	for _, m := range all {
		if m.Key == key {
			return m, true, nil
		}
	}
	return Message{}, false, nil
}

// load reads message id where it is. A delivered message is written to
// sent/ before it leaves the queue, so the sent copy is read first (a
// queued one beside it is stale) and again last (it moved meanwhile).
func (b *Box) load(ctx context.Context, id string) (Message, error) {
	var err error
	for _, f := range []Folder{Delivered, Queued, Delivered} {
		var m Message
		if m, err = b.read(ctx, f, id); !errors.Is(err, fs.ErrNotExist) {
			return m, err
		}
	}
	return Message{}, err
}

// timestamp is the time now as the box stores it, so a message returned
// equals the message read back: in UTC, without a monotonic reading.
func timestamp() time.Time { return time.Now().UTC().Round(0) }

// write writes m in f, as indented JSON.
func (b *Box) write(ctx context.Context, f Folder, m Message) error {
	data, err := encode(m)
	if err != nil {
		return err
	}
	if err := b.place.Write(ctx, f, m.ID, data); err != nil {
		return fmt.Errorf("write message %s: %w", m.ID, err)
	}
	return nil
}

func encode(m Message) ([]byte, error) {
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode message %s: %w", m.ID, err)
	}
	return append(data, '\n'), nil
}

func (b *Box) read(ctx context.Context, f Folder, id string) (Message, error) {
	data, err := b.place.Read(ctx, f, id)
	if err != nil {
		return Message{}, err
	}
	var m Message
	if err := json.Unmarshal(data, &m); err != nil {
		return Message{}, fmt.Errorf("read message %s (remove it if it cannot be repaired): %w", b.place.Where(f, id), err)
	}
	return m, nil
}
