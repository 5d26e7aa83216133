package transfer

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/agenttree/agenttree/engine/issues/backend"
	"github.com/agenttree/agenttree/engine/outbox"
	"github.com/agenttree/agenttree/internal/statedir"
)

// outboxOf is issue id's outbox where the state kept by b has it: the
// backend's own (outbox.Keeper: etcd's), else the directory beside the
// issue, as engine.Engine.Outbox opens it.
func outboxOf(b backend.Backend, root string, id int) outbox.Place {
	if k, ok := backend.As[outbox.Keeper](b); ok {
		return k.Outbox(id)
	}
	return outbox.Open(filepath.Join(statedir.Layout{Root: root}.Issue(id), "outbox")).Place()
}

// copyOutbox copies issue id's messages the destination does not hold
// (outbox.Copy): the ones not delivered move with the state, so that
// none is lost when the state's new place is used; the delivered ones
// too, so that the history and the keys put once stay.
func copyOutbox(ctx context.Context, o Options, id int) (int, error) {
	n, err := outbox.Copy(ctx, outboxOf(o.From, o.Root, id), outboxOf(o.To, o.Root, id))
	if err != nil {
		return n, fmt.Errorf("issue %d: copy its outbox: %w", id, err)
	}
	return n, nil
}
