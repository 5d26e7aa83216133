package statuscmd

import (
	"context"
	"fmt"
	"strings"

	"github.com/agenttree/agenttree/controller/nodes"
	"github.com/agenttree/agenttree/engine"
)

// printNodes says, with state.nodes, where the unfinished issues are
// (nodes.Survey); nodes that cannot be read are said so, never failing
// the list above (docs/ARCHITECTURE.md §8, "Nodes").
func (a cmds) printNodes(ctx context.Context, e *engine.Engine, rows []Row) {
	if !e.Config.State.Nodes.On {
		return
	}
	var open []nodes.Open
	for _, r := range rows {
		if r.Error == "" && !nodes.Finished(e.Config, r.Stage) {
			open = append(open, nodes.Open{ID: r.ID, WantsNode: nodes.WantsNode(e.Config, r.Stage, r.Escalated != nil)})
		}
	}
	if survey, err := a.NodeSurvey(ctx, e, open); err == nil {
		fmt.Fprintf(a.Out, "\n%s\n", strings.Join(survey.Lines(), "\n"))
	} else {
		fmt.Fprintf(a.Out, "\nthe nodes cannot be read: %v\n", err)
	}
}
