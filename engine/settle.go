package engine

import (
	"context"
	"fmt"
	"slices"

	"github.com/agenttree/agenttree/stages"
)

// Settle moves issue id to its flow's terminal stage of kind term, for a
// fact the controller saw outside agenttree: its PR merged (completion)
// or closed (abandon) by hand on the forge. The stage's entry hooks run as
// on any arrival (merging a merged PR succeeds). An issue already at a
// terminal stage is left where it is.
func (e *Engine) Settle(ctx context.Context, id int, term stages.Terminal, reason string) (*Result, error) {
	return e.Override(ctx, id, Actor{Kind: ActorController}, Order{Kind: stages.MoveManual, Reason: reason,
		Target: func(p Place) (*stages.Node, []string, error) {
			if p.Node.Terminal() != stages.TerminalNone {
				return nil, nil, nil
			}
			i := slices.IndexFunc(p.Flow.Nodes, func(n *stages.Node) bool { return n.Terminal() == term })
			if i < 0 {
				return nil, nil, fmt.Errorf("issue %d: %s, but flow %q has no %s stage to put it in; add a stage with `terminal: %s`", id, reason, p.Flow.Name, term, term)
			}
			return p.Flow.Nodes[i], nil, nil
		}})
}
