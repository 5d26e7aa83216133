package engine

import (
	"context"
	"fmt"

	"github.com/agenttree/agenttree/stages"
)

// Settle moves issue id to its flow's terminal stage of kind term, for a
// fact the controller saw outside agenttree: its PR merged (completion)
// or closed (abandon) by hand on the forge. The stage's entry hooks run as
// on any arrival (merging a merged PR succeeds). An issue already at a
// terminal stage is left where it is.
func (e *Engine) Settle(ctx context.Context, id int, term stages.Terminal, reason string) (*Result, error) {
	tx, iss, err := e.Store.Begin(ctx, id)
	if err != nil {
		return nil, err
	}
	defer tx.Unlock()
	p, err := e.where(iss, false)
	if err != nil {
		return nil, err
	}
	base := Result{Issue: id, From: iss.Stage, To: iss.Stage, Reasons: []string{reason}, Version: iss.Version}
	if p.node.Terminal() != stages.TerminalNone {
		base.Status = StatusFinal
		return &base, nil
	}
	target := terminalNode(p.flow, term)
	if target == nil {
		return nil, fmt.Errorf("issue %d: %s, but flow %q has no %s stage to put it in; add a stage with `terminal: %s`", id, reason, p.flow.Name, term, term)
	}
	t := &transition{e: e, ctx: ctx, tx: tx, actor: Actor{Kind: ActorController}, m: e.Machine(p.flow)}
	return t.override(p, hop{from: p.node, to: target, kind: stages.MoveManual, reason: reason}, nil, base)
}
