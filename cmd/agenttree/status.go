package main

import (
	"fmt"
	"text/tabwriter"

	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/stages"
	"github.com/spf13/cobra"
)

type statusRow struct {
	ID    int    `json:"id"`
	Title string `json:"title"`
	Stage string `json:"stage"`
	Owner string `json:"owner"`
	Next  string `json:"next"`
	// Unfinished: the stage's entry hooks have not all passed.
	Unfinished bool `json:"unfinished,omitempty"`
}

func (a *app) statusCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "status [ID]",
		Short: "Show where issues are and who acts next",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			e, err := a.engine()
			if err != nil {
				return err
			}
			if len(args) == 1 {
				return a.statusOne(e, args[0], asJSON)
			}
			list, err := e.Store.List()
			if err != nil {
				return err
			}
			rows := make([]statusRow, 0, len(list))
			for _, iss := range list {
				rows = append(rows, status(e, iss))
			}
			if asJSON {
				return a.printJSON(rows)
			}
			return a.printStatusTable(rows)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	return cmd
}

// status is where iss is, who acts there and where `next` would take it.
func status(e *engine.Engine, iss *issues.Issue) statusRow {
	row := statusRow{ID: iss.ID, Title: iss.Title, Stage: iss.Stage, Unfinished: iss.EntryPending != nil}
	n, ok := e.Config.Node(iss.Stage)
	if !ok {
		return row
	}
	row.Owner = describeNode(n)
	flow, err := e.Config.Flow(iss.Flow)
	if err != nil || n.Terminal() != stages.TerminalNone {
		return row
	}
	if to, _, err := flow.Next(n.Path, e.Snapshot(iss).CondVars()); err == nil && to != nil {
		row.Next = to.Path
	}
	return row
}

// statusOne shows one issue in full.
func (a *app) statusOne(e *engine.Engine, arg string, asJSON bool) error {
	id, err := parseID(arg)
	if err != nil {
		return err
	}
	iss, err := e.Store.Get(id)
	if err != nil {
		return err
	}
	row := status(e, iss)
	if asJSON {
		return a.printJSON(row)
	}
	a.printIssue(e, iss)
	if row.Next != "" {
		fmt.Fprintf(a.out, "  next:    %s\n", row.Next)
	}
	return nil
}

func (a *app) printStatusTable(rows []statusRow) error {
	tw := tabwriter.NewWriter(a.out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTAGE\tWHO ACTS\tNEXT\tTITLE")
	for _, r := range rows {
		stage := r.Stage
		if r.Unfinished {
			stage += " (unfinished)"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\n", r.ID, stage, r.Owner, r.Next, r.Title)
	}
	return tw.Flush()
}
