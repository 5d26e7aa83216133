package main

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/internal/gitx"
)

var branchIDRE = regexp.MustCompile(`^(?:.*/)?(?:issue-0*([1-9][0-9]*)(?:$|[-_/])|0*([1-9][0-9]*)-)`)

// issueFromBranch reads an issue id out of a branch name such as
// `issue-42`, `issue-042-login` or `042-login`.
func issueFromBranch(branch string) (int, bool) {
	m := branchIDRE.FindStringSubmatch(branch)
	if m == nil {
		return 0, false
	}
	s := m[1]
	if s == "" {
		s = m[2]
	}
	id, err := strconv.Atoi(s)
	return id, err == nil
}

// resolveIssue finds the issue a command is about: -i, AGENTTREE_ISSUE,
// then the current git branch.
func (a *app) resolveIssue(flag string, dir string) (int, error) {
	if flag != "" {
		return parseID(flag)
	}
	if env := a.getenv("AGENTTREE_ISSUE"); env != "" {
		id, err := parseID(env)
		if err != nil {
			return 0, fmt.Errorf("AGENTTREE_ISSUE: %w", err)
		}
		return id, nil
	}
	branch, err := (&gitx.Repo{Dir: dir}).CurrentBranch(a.ctx)
	if err == nil {
		if id, ok := issueFromBranch(branch); ok {
			return id, nil
		}
	}
	return 0, fmt.Errorf("which issue? pass -i ID, set AGENTTREE_ISSUE, or work on a branch named like issue-42 (current branch: %q)", branch)
}

func (a *app) nextCmd() *cobra.Command {
	var idFlag string
	var dryRun, asJSON bool
	cmd := &cobra.Command{
		Use:   "next",
		Short: "Check the current stage's gates and move the issue to its next stage",
		Long: "Check the current stage's gates and move the issue to its next stage.\n\n" +
			"Exit status: 0 moved (or already at the final stage), 1 blocked by a gate,\n" +
			"2 bad usage or config, 3 waiting on a person or the controller.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			e, err := a.engine()
			if err != nil {
				return err
			}
			id, err := a.resolveIssue(idFlag, e.WorkDir)
			if err != nil {
				return err
			}
			res, err := e.Next(a.ctx, id, engine.ActorFromEnv(a.getenv), dryRun)
			if err != nil {
				return err
			}
			return a.report(res, asJSON)
		},
	}
	cmd.Flags().StringVarP(&idFlag, "issue", "i", "", "issue id (default: AGENTTREE_ISSUE, then the git branch)")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "check the gates without moving the issue")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON")
	return cmd
}

func (a *app) approveCmd() *cobra.Command {
	var dryRun, asJSON bool
	cmd := &cobra.Command{
		Use:   "approve ID",
		Short: "Approve an issue waiting at a human review (people only)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			e, id, err := a.engineFor(args[0])
			if err != nil {
				return err
			}
			res, err := e.Approve(a.ctx, id, engine.ActorFromEnv(a.getenv), dryRun)
			if err != nil {
				return err
			}
			return a.report(res, asJSON)
		},
	}
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "check the gates without moving the issue")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON")
	return cmd
}

// report prints a transition result and turns its status into the exit code.
func (a *app) report(res *engine.Result, asJSON bool) error {
	if asJSON {
		if err := a.printJSON(res); err != nil {
			return err
		}
	} else {
		a.printResult(res)
	}
	if code := resultCode(res); code != exitOK {
		return silentExit(code)
	}
	return nil
}

func (a *app) printResult(res *engine.Result) {
	for _, w := range res.Warnings {
		fmt.Fprintln(a.err, "warning:", w)
	}
	switch res.Status {
	case engine.StatusAdvanced:
		verb := "moved"
		if res.DryRun {
			verb = "would move"
		}
		fmt.Fprintf(a.out, "issue %d %s %s → %s (%s)\n", res.Issue, verb, res.From, res.To, res.Kind)
		for _, r := range res.Reasons {
			fmt.Fprintln(a.out, "  "+r)
		}
		for _, s := range res.Skipped {
			fmt.Fprintln(a.out, "  skipped "+s)
		}
		for _, n := range res.Notes {
			fmt.Fprintln(a.out, "  "+n)
		}
		if len(res.Unfinished) > 0 {
			fmt.Fprintf(a.out, "but the work of entering %s did not finish; fix this, then run `agenttree next -i %d` to finish it:\n", res.To, res.Issue)
			for _, u := range res.Unfinished {
				fmt.Fprintln(a.out, "  - "+u)
			}
		}
		if res.Instructions != "" {
			fmt.Fprintln(a.out)
			fmt.Fprintln(a.out, res.Instructions)
		}
	case engine.StatusBlocked:
		for _, n := range res.Notes {
			fmt.Fprintln(a.out, n)
		}
		if res.Conflict {
			fmt.Fprintf(a.out, "issue %d was changed by another agenttree process while this one ran; nothing was done. Look at it (`agenttree status %d`) and run the command again if it still applies.\n", res.Issue, res.Issue)
			return
		}
		fmt.Fprintf(a.out, "issue %d is blocked at %s; fix these, then run `agenttree next` again:\n", res.Issue, res.From)
		for _, r := range res.Reasons {
			fmt.Fprintln(a.out, "  - "+r)
		}
	case engine.StatusWaiting:
		fmt.Fprintf(a.out, "issue %d is waiting at %s: %s\n", res.Issue, res.From, strings.Join(res.Reasons, "; "))
	case engine.StatusFinal:
		for _, n := range res.Notes {
			fmt.Fprintln(a.out, n)
		}
		fmt.Fprintf(a.out, "%s\n", strings.Join(res.Reasons, "; "))
	}
}

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
			var list []*issues.Issue
			if len(args) == 1 {
				id, err := parseID(args[0])
				if err != nil {
					return err
				}
				iss, err := e.Store.Get(id)
				if err != nil {
					return err
				}
				list = []*issues.Issue{iss}
			} else if list, err = e.Store.List(); err != nil {
				return err
			}
			rows := []statusRow{}
			for _, iss := range list {
				row := statusRow{ID: iss.ID, Title: iss.Title, Stage: iss.Stage, Unfinished: iss.EntryPending != nil}
				if n, ok := e.Config.Node(iss.Stage); ok {
					row.Owner = describeNode(n)
					if flow, err := e.Config.Flow(iss.Flow); err == nil {
						if to, _, err := flow.Next(n.Path, e.Snapshot(iss).CondVars()); err == nil && to != nil && n.Terminal() == "" {
							row.Next = to.Path
						}
					}
				}
				rows = append(rows, row)
			}
			if asJSON {
				if len(args) == 1 {
					return a.printJSON(rows[0])
				}
				return a.printJSON(rows)
			}
			if len(args) == 1 {
				a.printIssue(e, list[0])
				if rows[0].Next != "" {
					fmt.Fprintf(a.out, "  next:    %s\n", rows[0].Next)
				}
				return nil
			}
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
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	return cmd
}
