package engine

import (
	"context"
	"path/filepath"

	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/engine/outbox"
)

// Outbox is issue id's queue of messages: kept by the store's backend
// when it keeps them (outbox.Keeper: etcd's, so that every host sharing
// the state shares them, docs/ARCHITECTURE.md §8), else in the issue's
// directory, host/issues/NNN/outbox/.
func (e *Engine) Outbox(id int) *outbox.Box {
	if k, ok := issues.As[outbox.Keeper](e.Store); ok {
		return outbox.At(k.Outbox(id))
	}
	return outbox.Open(filepath.Join(e.Store.HostDir(id), "outbox"))
}

// Messages are what the issue's state says people and its agent must be
// told (notice.Book.Messages). The engine queues each history entry's
// messages as it writes the entry, and those of the last earlier entry
// that has any again, for a writer killed before it queued them
// (notice.Book.QueueEntries); the controller puts these in the outbox
// again on every pass, and a key already there adds nothing, so a message
// is queued exactly once whatever crashes.
func (e *Engine) Messages(iss *issues.Issue) []outbox.Message { return e.notices.Messages(iss) }

// queueEntries queues the messages of the history entries iss gained
// since it had before of them (notice.Book.QueueEntries).
func (e *Engine) queueEntries(ctx context.Context, iss *issues.Issue, before int) error {
	return e.notices.QueueEntries(ctx, e.Outbox(iss.ID), iss, before)
}
