package outbox

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/agenttree/agenttree/internal/atomicfile"
)

// Folder is where a message is in its place: queued, or among the
// delivered ones kept.
type Folder int

const (
	// Queued: not delivered yet (pending, delivering, typed, untaken), or
	// a stale copy of one delivered that a crash left behind.
	Queued Folder = iota
	// Delivered: sent, kept for the history (the last KeepSent).
	Delivered
)

// Place is where a box keeps its messages' bytes and its locks: a
// directory (Open), or a store shared by several hosts (etcd's,
// engine/issues/etcdstore, docs/ARCHITECTURE.md §8). It keeps bytes only:
// every rule of a box (keys put once, the states of a delivery, a
// message sent before it leaves the queue, the history kept) is Box's,
// the same whatever keeps the bytes. Its methods are safe to call from
// several goroutines and processes at once.
type Place interface {
	// String names the place for people, in errors: the directory, the
	// key prefix.
	String() string
	// Where names one message for people: its file, its key.
	Where(f Folder, id string) string
	// Idle reports, at little cost, that no message can be waiting, so
	// that a delivery takes no lock: the controller asks it of every
	// issue at every tick. It may say false of a place with nothing
	// waiting (a directory whose messages were all sent).
	Idle(ctx context.Context) bool
	// Lock takes the box's lock called name ("put", "deliver"), waiting
	// until ctx ends or wait passes. A wait that ends with the lock held
	// elsewhere is an error wrapping atomicfile.ErrLocked.
	Lock(ctx context.Context, name string, wait time.Duration) (unlock func(), err error)
	// IDs lists the ids of the messages in f, ascending: oldest first.
	IDs(ctx context.Context, f Folder) ([]string, error)
	// Read reads message id's bytes in f; a missing one is an error
	// wrapping fs.ErrNotExist.
	Read(ctx context.Context, f Folder, id string) ([]byte, error)
	// Write replaces message id's bytes in f, atomically: a reader sees
	// the old bytes or the new ones, whatever stops the writer.
	Write(ctx context.Context, f Folder, id string, data []byte) error
	// Remove removes message id from f; a missing one is no error.
	Remove(ctx context.Context, f Folder, id string) error
}

// Mover is a place that moves a message from the queue to the delivered
// ones in one step (a transaction): Box then asks it rather than writing
// the delivered copy and removing the queued one apart.
type Mover interface {
	// Move writes data as message id's delivered bytes and removes its
	// queued ones, both or neither.
	Move(ctx context.Context, id string, data []byte) error
}

// Keeper is a store that keeps its issues' outboxes itself rather than
// in each issue's directory (etcd's): engine.Engine.Outbox finds it on
// the issue store's backend, so that every host sharing the state shares
// the outboxes too.
type Keeper interface {
	// Outbox is the place of issue id's outbox.
	Outbox(id int) Place
}

const (
	sentDir = "sent"
	ext     = ".json"
)

// dirPlace is a box in a directory: one JSON file per message, named by
// its ID, queued in the directory and delivered under sent/; each lock a
// file (.put.lock, .deliver.lock). Every write is atomic
// (internal/atomicfile).
type dirPlace struct{ dir string }

func (d *dirPlace) String() string { return d.dir }

func (d *dirPlace) Where(f Folder, id string) string { return d.path(f, id) }

func (d *dirPlace) folder(f Folder) string {
	if f == Delivered {
		return filepath.Join(d.dir, sentDir)
	}
	return d.dir
}

func (d *dirPlace) path(f Folder, id string) string { return filepath.Join(d.folder(f), id+ext) }

// Idle is true while the directory is not there: nothing was ever put.
func (d *dirPlace) Idle(context.Context) bool {
	_, err := os.Stat(d.dir)
	return errors.Is(err, fs.ErrNotExist)
}

// Lock takes the file .<name>.lock in the directory, made first.
func (d *dirPlace) Lock(ctx context.Context, name string, wait time.Duration) (func(), error) {
	if err := os.MkdirAll(d.dir, 0o755); err != nil {
		return nil, fmt.Errorf("create the outbox: %w", err)
	}
	return atomicfile.Lock(ctx, filepath.Join(d.dir, "."+name+".lock"), wait, "the outbox "+d.dir)
}

// IDs lists the JSON files of f's directory; a missing directory holds
// none.
func (d *dirPlace) IDs(_ context.Context, f Folder) ([]string, error) {
	entries, err := os.ReadDir(d.folder(f))
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

func (d *dirPlace) Read(_ context.Context, f Folder, id string) ([]byte, error) {
	return os.ReadFile(d.path(f, id))
}

// Write writes the file atomically; sent/ is made on the first delivery.
func (d *dirPlace) Write(_ context.Context, f Folder, id string, data []byte) error {
	if f == Delivered {
		if err := os.MkdirAll(d.folder(f), 0o755); err != nil {
			return fmt.Errorf("create the outbox's sent directory: %w", err)
		}
	}
	return atomicfile.Write(d.path(f, id), data, 0o644)
}

func (d *dirPlace) Remove(_ context.Context, f Folder, id string) error {
	path := d.path(f, id)
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove %s: %w", path, err)
	}
	return nil
}
