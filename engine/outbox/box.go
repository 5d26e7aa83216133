// Package outbox keeps an issue's messages to its agent (and to the
// person running the pipeline) on disk until they are delivered: a
// message is never lost when its recipient is away or agenttree stops,
// and never delivered twice.
//
// A box is a directory: one JSON file per undelivered message, named by
// its ID so that a listing is oldest first, and the delivered ones, the
// last DefaultKeepSent of them, under sent/. Every write is atomic.
package outbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/agenttree/agenttree/internal/atomicfile"
)

// DefaultKeepSent is how many delivered messages a box keeps.
const DefaultKeepSent = 200

const (
	sentDir     = "sent"
	putLock     = ".put.lock"
	deliverLock = ".deliver.lock"
	ext         = ".json"
	// lockWait bounds the wait for another process putting or delivering:
	// a delivery takes a few seconds per message.
	lockWait = 30 * time.Second
)

// Box is the outbox in one directory. Its methods are safe to call from
// several goroutines and processes at once.
type Box struct {
	dir string
	// KeepSent is how many delivered messages the box keeps, newest;
	// zero means DefaultKeepSent.
	KeepSent int
	seq      atomic.Uint32
}

// Open returns the box in dir (an issue's outbox directory). Nothing is
// created until a message is put.
func Open(dir string) *Box { return &Box{dir: dir} }

// Dir is the box's directory.
func (b *Box) Dir() string { return b.dir }

// Put adds m to the box, pending, and returns it with its ID, creation
// time and state set. When m has a Key that a message in the box already
// has (in any state), nothing is added and that message is returned.
func (b *Box) Put(ctx context.Context, m Message) (Message, error) {
	if m.To == "" {
		m.To = ToAgent
	}
	if err := m.validate(); err != nil {
		return Message{}, fmt.Errorf("put a message in %s: %w", b.dir, err)
	}
	if err := os.MkdirAll(b.dir, 0o755); err != nil {
		return Message{}, fmt.Errorf("create the outbox: %w", err)
	}
	// Under the lock, a key is looked up and added by one process at a
	// time, and IDs are made in the order of the clock.
	unlock, err := atomicfile.Lock(ctx, filepath.Join(b.dir, putLock), lockWait, "the outbox "+b.dir)
	if err != nil {
		return Message{}, err
	}
	defer unlock()
	if m.Key != "" {
		if old, ok, err := b.withKey(m.Key); err != nil || ok {
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
	if err := b.write(b.queuedPath(m.ID), m); err != nil {
		return Message{}, err
	}
	return m, nil
}

// Pending returns the messages not delivered yet (pending or delivering),
// oldest first.
func (b *Box) Pending() ([]Message, error) {
	ids, err := listIDs(b.dir)
	if err != nil {
		return nil, err
	}
	var out []Message
	for _, id := range ids {
		m, err := b.load(id)
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
func (b *Box) Recent(n int) ([]Message, error) {
	queued, err := listIDs(b.dir)
	if err != nil {
		return nil, err
	}
	sent, err := listIDs(filepath.Join(b.dir, sentDir))
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
		m, err := b.load(id)
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
func (b *Box) withKey(key string) (Message, bool, error) {
	all, err := b.Recent(0)
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
func (b *Box) load(id string) (Message, error) {
	var err error
	for _, path := range []string{b.sentPath(id), b.queuedPath(id), b.sentPath(id)} {
		var m Message
		if m, err = read(path); !errors.Is(err, fs.ErrNotExist) {
			return m, err
		}
	}
	return Message{}, err
}

// timestamp is the time now as the box stores it, so a message returned
// equals the message read back: in UTC, without a monotonic reading.
func timestamp() time.Time { return time.Now().UTC().Round(0) }

func (b *Box) queuedPath(id string) string { return filepath.Join(b.dir, id+ext) }
func (b *Box) sentPath(id string) string   { return filepath.Join(b.dir, sentDir, id+ext) }

func (b *Box) write(path string, m Message) error {
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("encode message %s: %w", m.ID, err)
	}
	if err := atomicfile.Write(path, append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("write message %s: %w", m.ID, err)
	}
	return nil
}

func read(path string) (Message, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Message{}, err
	}
	var m Message
	if err := json.Unmarshal(data, &m); err != nil {
		return Message{}, fmt.Errorf("read message %s (remove the file if it cannot be repaired): %w", path, err)
	}
	return m, nil
}

// listIDs returns the IDs of the messages in dir, oldest first; a missing
// directory holds none.
func listIDs(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list the outbox: %w", err)
	}
	var ids []string
	for _, e := range entries {
		name := e.Name()
		if e.Type().IsRegular() && !strings.HasPrefix(name, ".") && strings.HasSuffix(name, ext) {
			ids = append(ids, strings.TrimSuffix(name, ext))
		}
	}
	return ids, nil
}
