package sessioncmd

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agenttree/agenttree/cmd/agenttree/cmdutil"
	"github.com/agenttree/agenttree/internal/exitcode"
	"github.com/agenttree/agenttree/internal/textsafe"
	"github.com/agenttree/agenttree/sessions/cleanup"
)

// CleanOptions is what `clean` was asked.
type CleanOptions struct {
	*cmdutil.App
	DryRun, JSON bool
}

func newCmdClean(a *cmdutil.App, runF func(context.Context, *CleanOptions) error) *cobra.Command {
	opts := &CleanOptions{App: a}
	cmd := &cobra.Command{
		Use:   "clean",
		Short: "Remove the worktrees and agent sessions of finished issues, never unsaved work (people only)",
		Long: "For every issue at a stage where it ends (accepted, not_doing, ...) that still has an\n" +
			"agent session or a worktree: end the tmux session and revoke its token, remove the\n" +
			"worktree, delete the local branch (its work is merged or pushed), and remove the\n" +
			"session record. A worktree with uncommitted changes, or with commits on none of the\n" +
			"remote's branches (fetched first) nor on the default branch, is kept and named, with\n" +
			"what to do. Issues not finished are left alone. Running it again is harmless.\n\n" +
			cmdutil.ExitStatus("0 done, 1 some worktree kept for its work or a removal failed", cmdutil.ExitUsageOrConfig+", "+cmdutil.ExitNotPerson),
		Example: "  agenttree clean --dry-run\n  agenttree clean",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return cleanRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.DryRun, "dry-run", false, "say what would be removed, and remove nothing")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print what was done with each issue as JSON")
	return cmd
}

func cleanRun(ctx context.Context, opts *CleanOptions) error {
	a := cmds{opts.App}
	m, err := a.sessions(ctx, "cleans up")
	if err != nil {
		return err
	}
	s := a.Spin("fetching and checking the worktrees of finished issues")
	list, err := cleanup.Clean(ctx, m, opts.DryRun)
	s.Stop()
	if list == nil && err != nil {
		return err
	}
	if err != nil {
		fmt.Fprintln(a.ErrOut, "warning:", err)
	}
	if opts.JSON {
		if err := a.PrintJSON(list); err != nil {
			return err
		}
	} else {
		printCleaned(a.Out, list)
	}
	if slices.ContainsFunc(list, func(c cleanup.Cleaned) bool { return c.Refused() || c.KeptFor == cleanup.Failed }) {
		return cmdutil.SilentExit(exitcode.Blocked)
	}
	return nil
}

// maxCleanLine bounds a line of clean's output: long enough for two
// paths and the command that removes one.
const maxCleanLine = 1000

// printCleaned prints one line per issue: what went, or why it stays.
func printCleaned(w io.Writer, list []cleanup.Cleaned) {
	if len(list) == 0 {
		fmt.Fprintln(w, "nothing to clean: no issue has an agent session or a worktree left")
		return
	}
	for _, c := range list {
		line := fmt.Sprintf("issue %d: kept: %s", c.Issue, c.Why)
		if c.Outcome != cleanup.Kept {
			line = fmt.Sprintf("issue %d: %s %s", c.Issue, strings.ReplaceAll(string(c.Outcome), "_", " "), strings.Join(leftBehind(c), ", "))
		}
		if c.BranchKept != "" {
			line += fmt.Sprintf("; branch %s stays: %s", c.Branch, c.BranchKept)
		}
		fmt.Fprintln(w, textsafe.Line(line, maxCleanLine))
	}
}

// leftBehind names what c's issue left: its worktree, branch and session.
func leftBehind(c cleanup.Cleaned) []string {
	var parts []string
	if c.Worktree != "" {
		parts = append(parts, "worktree "+c.Worktree)
	}
	if c.Branch != "" && c.BranchKept == "" {
		parts = append(parts, "branch "+c.Branch)
	}
	if c.Session != "" {
		parts = append(parts, "tmux session "+c.Session, "session record")
	}
	return parts
}
