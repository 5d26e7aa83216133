package sessioncmd

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agenttree/agenttree/cmd/agenttree/cmdutil"
	"github.com/agenttree/agenttree/internal/exitcode"
	"github.com/agenttree/agenttree/internal/textsafe"
)

// AssignOptions is what `assign` was asked.
type AssignOptions struct {
	*cmdutil.App
	IssueArg, Node string
	JSON           bool
}

func newCmdAssign(a *cmdutil.App, runF func(context.Context, *AssignOptions) error) *cobra.Command {
	opts := &AssignOptions{App: a}
	cmd := &cobra.Command{
		Use:   "assign ID --node NAME",
		Short: "Give an issue to another node, whose agent takes it on (people only; state.nodes)",
		Long: "Give issue ID to node NAME, alive: its agent starts there at the node's next pass, from what\n" +
			"is pushed and stored, and the node that had it stops its agent if it is still running. The\n" +
			"controller gives each issue a node once; only a person moves it, as when its node is gone\n" +
			"(`agenttree status` says so).",
		Example: "  agenttree assign 12 --node host-b",
		Args:    cmdutil.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.IssueArg = args[0]
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return assignRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Node, "node", "", "the node to give the issue to (required)")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the issue's node, before and now, as JSON")
	_ = cmd.MarkFlagRequired("node")
	return cmd
}

func assignRun(ctx context.Context, opts *AssignOptions) error {
	a := cmds{opts.App}
	if err := a.ForPeople("only a person %s; %s cannot", "gives issues to nodes"); err != nil {
		return err
	}
	id, err := cmdutil.ParseID(opts.IssueArg)
	if err != nil {
		return err
	}
	e, err := a.Engine(ctx)
	if err != nil {
		return err
	}
	if _, err := e.Store.Get(id); err != nil {
		return err
	}
	reg, err := a.Nodes(ctx, e.Config)
	if err != nil {
		return &cmdutil.ExitError{Code: exitcode.Usage, Err: err}
	}
	live, err := reg.Live(ctx)
	if err != nil {
		return err
	}
	names := make([]string, 0, len(live))
	for _, n := range live {
		names = append(names, n.Name)
	}
	if !slices.Contains(names, opts.Node) {
		alive := textsafe.Line(strings.Join(names, ", "), 400)
		if alive == "" {
			alive = "none: start one with `agenttree node` on a host that runs agents"
		}
		return &cmdutil.ExitError{Code: exitcode.Usage, Err: fmt.Errorf("node %s is not alive (alive: %s)", strconv.Quote(textsafe.Line(opts.Node, 64)), alive)}
	}
	assigned, err := reg.Assigned(ctx)
	if err != nil {
		return err
	}
	from := assigned[id]
	if from != opts.Node {
		if err := reg.Assign(ctx, id, opts.Node, from); err != nil {
			return fmt.Errorf("%w; `agenttree status` lists the nodes and their issues: look, and try again", err)
		}
	}
	if opts.JSON {
		return a.PrintJSON(map[string]any{"issue": id, "node": opts.Node, "was": from})
	}
	to, was := textsafe.Line(opts.Node, 64), textsafe.Line(from, 64)
	switch from {
	case opts.Node:
		fmt.Fprintf(a.Out, "issue %d is node %s's already\n", id, to)
	case "":
		fmt.Fprintf(a.Out, "issue %d given to node %s; its agent starts there at the node's next pass\n", id, to)
	default:
		fmt.Fprintf(a.Out, "issue %d moved from node %s to node %s; its agent starts there at the node's next pass, from its branch as pushed, and %s stops its own. "+
			"The stage documents written on %s stay in its checkout: copy those the agent needs\n", id, was, to, was, was)
	}
	return nil
}
