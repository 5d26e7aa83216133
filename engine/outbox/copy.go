package outbox

import (
	"context"
	"errors"
	"io/fs"
	"slices"
)

// Copy copies the messages of from, queued and delivered, that to does
// not hold yet, byte for byte, and returns how many: the outbox moved
// with the issues' state (package transfer, `agenttree migrate`). from is
// read under both its locks, so that no message is put or moves
// meanwhile, and written under to's put lock; a place with nothing in
// it is not locked (nor, for a directory, made), and one copied to
// itself (a state directory's own files) is left alone. Copied again
// after the source delivered a message, its delivered copy joins the
// queued one at to, which the rules read as delivered (load) and the
// next delivery removes (tidy).
func Copy(ctx context.Context, from, to Place) (int, error) {
	if from.String() == to.String() {
		return 0, nil
	}
	if from.Idle(ctx) {
		if ids, err := from.IDs(ctx, Delivered); err != nil || len(ids) == 0 {
			return 0, err
		}
	}
	for _, l := range []struct {
		p    Place
		name string
	}{{from, putLock}, {from, deliverLock}, {to, putLock}} {
		unlock, err := l.p.Lock(ctx, l.name, lockWait)
		if err != nil {
			return 0, err
		}
		defer unlock()
	}
	n := 0
	for _, f := range []Folder{Queued, Delivered} {
		ids, err := from.IDs(ctx, f)
		if err != nil {
			return n, err
		}
		there, err := to.IDs(ctx, f)
		if err != nil {
			return n, err
		}
		for _, id := range ids {
			if _, found := slices.BinarySearch(there, id); found {
				continue
			}
			data, err := from.Read(ctx, f, id)
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			if err != nil {
				return n, err
			}
			if err := to.Write(ctx, f, id, data); err != nil {
				return n, err
			}
			n++
		}
	}
	return n, nil
}
