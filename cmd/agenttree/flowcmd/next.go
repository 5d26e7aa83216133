package flowcmd

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/agenttree/agenttree/cmd/agenttree/cmdutil"
	"github.com/agenttree/agenttree/controller"
	"github.com/agenttree/agenttree/controller/api"
	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/sessions"
)

// NextOptions is what `next` was asked.
type NextOptions struct {
	*cmdutil.App
	// IssueArg is the issue's id as given (-i), "" for the one the
	// environment or the git branch names.
	IssueArg     string
	DryRun, JSON bool
}

func newCmdNext(a *cmdutil.App, runF func(context.Context, *NextOptions) error) *cobra.Command {
	opts := &NextOptions{App: a}
	cmd := &cobra.Command{
		Use:   "next",
		Short: "Check the current stage's gates and move the issue to its next stage",
		Example: `  agenttree next       # the issue of AGENTTREE_ISSUE, else of the branch
  agenttree next -i 3
  agenttree next --dry-run --json`,
		Long: "Check the current stage's gates and move the issue to its next stage.\n\n" +
			"A person's next at a controller stage runs the controller's pass for the issue here. At a\n" +
			"human review, a person's next is an approval, the same as `agenttree approve ID`: the\n" +
			"review's gates, the approval of the PR's head, then the next stage's entry work (a merge).\n" +
			"--dry-run says what it would do and changes nothing.\n\n" +
			cmdutil.ExitStatus("0 moved (or already at the final stage); 1 blocked by a gate (each reason\n"+
				"printed), stepped back, or the new stage's entry work did not finish; 2 bad usage or\n"+
				"config; 3 waiting on a person or the controller, or another process has the issue;\n"+
				"130 interrupted"),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return nextRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVarP(&opts.IssueArg, "issue", "i", "", "issue id (default: AGENTTREE_ISSUE, then the git branch)")
	cmd.Flags().BoolVar(&opts.DryRun, "dry-run", false, "check the gates without moving the issue")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the result as JSON")
	return cmd
}

func nextRun(ctx context.Context, opts *NextOptions) error {
	a := cmds{opts.App}
	if c, err := a.Remote(); err != nil {
		return err
	} else if c != nil {
		req := api.NextRequest{RequestID: api.RequestID(), DryRun: opts.DryRun, JSON: opts.JSON}
		if opts.IssueArg != "" {
			if req.Issue, err = cmdutil.ParseID(opts.IssueArg); err != nil {
				return err
			}
		}
		return a.Ask(ctx, c, api.RouteNext, req)
	}
	e, err := a.Engine(ctx)
	if err != nil {
		return err
	}
	if !inGitRepo(filepath.Dir(e.Config.File)) {
		fmt.Fprintf(a.ErrOut, "warning: %s is not in a git repository: gates on commits, branches and PRs cannot pass; run `git init` there (then `git remote add origin URL`)\n",
			filepath.Dir(e.Config.File))
	}
	id, err := a.ResolveIssue(ctx, opts.IssueArg, e.WorkDir)
	if err != nil {
		return err
	}
	actor, err := a.Actor(e, id)
	if err != nil {
		return err
	}
	// The issue is read once, under its lock, when nobody holds it
	// (nearly always): what the command decides with is what it changes.
	// Held by another process, it is read without the lock, and the
	// engine reads it again under the lock to move it.
	tx, iss, err := e.Store.TryBegin(id)
	if err != nil {
		return err
	}
	unlock := func() {
		if tx != nil {
			tx.Unlock()
			tx = nil
		}
	}
	defer unlock()
	if tx == nil {
		if iss, err = e.Store.Get(id); err != nil {
			return err
		}
	}
	if !opts.DryRun && actor.Kind == engine.ActorHuman && controllerRuns(e, iss) {
		// A person's next at a controller stage is the controller's pass,
		// in the foreground: it never skips the controller's work, and
		// takes the issue's lock itself.
		unlock()
		if res, err := a.controllerPass(ctx, e, iss); err != nil || res != nil {
			if err != nil {
				return err
			}
			return a.Report(res, opts.JSON)
		}
		// Nothing for the controller to do after all: the issue is read
		// again, as it is now.
		if iss, err = e.Store.Get(id); err != nil {
			return err
		}
	}
	// An agent of another OS user commits in a clone of its own: its work
	// is taken in first, for the gates to see.
	if err := sessions.New(e, nil).TakeWork(ctx, id); err != nil {
		return err
	}
	s := a.Spin(fmt.Sprintf("checking the gates of issue %d", id))
	res, err := e.NextFrom(ctx, tx, iss, actor, opts.DryRun)
	s.Stop()
	if err != nil {
		return err
	}
	return a.Report(res, opts.JSON)
}

// ApproveOptions is what `approve` was asked.
type ApproveOptions struct {
	*cmdutil.App
	// IssueArg is the issue's id as given.
	IssueArg     string
	DryRun, JSON bool
}

func newCmdApprove(a *cmdutil.App, runF func(context.Context, *ApproveOptions) error) *cobra.Command {
	opts := &ApproveOptions{App: a}
	cmd := &cobra.Command{
		Use:   "approve ID",
		Short: "Approve an issue waiting at a human review (people only)",
		Long: "Approve issue ID, waiting at a human review: check the review's gates (an approved PR,\n" +
			"say) and move it on, running the next stage's entry work (a merge, say). On the local\n" +
			"forge, approving records your approval of the PR at its current head; only that head is\n" +
			"merged. A person's `agenttree next -i ID` at a review does the same.\n\n" +
			"A head pushed to the PR during the review (or after it, where the merge refused it) is one\n" +
			"CI did not pass: approve does not approve it, but sends the issue back to the stage before\n" +
			"the review that runs CI, and says so; the controller does the same when it sees the push.\n" +
			"Once CI passed on the new head and the issue is back at the review, approve it.\n\n" +
			"--dry-run says what approving would do: which head it approves and where the issue goes\n" +
			"then, with the work that runs there; it changes nothing.\n\n" +
			cmdutil.ExitStatus("0 approved; 1 a gate failed (each reason printed), the entry work did not\n"+
				"finish, or the issue went back through CI for a new head; 2 bad usage or config, or the\n"+
				"issue is at no review; 3 not a person, or another process has the issue; 130 interrupted"),
		Example: `  agenttree approve 3
  agenttree approve 3 --dry-run`,
		Args: cmdutil.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.IssueArg = args[0]
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return approveRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.DryRun, "dry-run", false, "say what approving would do (the head approved, where the issue goes) without doing it")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the result as JSON")
	return cmd
}

func approveRun(ctx context.Context, opts *ApproveOptions) error {
	a := opts.App
	e, id, actor, err := a.EngineActing(ctx, opts.IssueArg)
	if err != nil {
		return err
	}
	s := a.Spin(fmt.Sprintf("approving issue %d", id))
	res, err := e.Approve(ctx, id, actor, opts.DryRun)
	s.Stop()
	if err != nil {
		return err
	}
	return a.Report(res, opts.JSON)
}

// controllerRuns reports whether iss is at a controller stage, where a
// person's next is the controller's pass (controllerPass).
func controllerRuns(e *engine.Engine, iss *issues.Issue) bool {
	node, ok := e.Config.Node(iss.Stage)
	return ok && iss.Escalated == nil && node.Controller()
}

// controllerPass runs the controller's passes over iss, at a controller
// stage (controllerRuns), in the foreground, with a progress line on
// stderr while it waits. It returns nil when the controller has nothing
// to do there.
func (a cmds) controllerPass(ctx context.Context, e *engine.Engine, iss *issues.Issue) (*engine.Result, error) {
	id := iss.ID
	node, _ := e.Config.Node(iss.Stage)
	fmt.Fprintf(a.ErrOut, "%s is run by the host controller; running its pass for issue %d here\n", node.Path, id)
	return controller.Drive(ctx, a.Reloader(ctx, e), id, func(p controller.Progress) {
		fmt.Fprintf(a.ErrOut, "  %s: %s (next look in %s)\n", p.Elapsed.Round(time.Second), cmdutil.SafeText(p.Status), p.Next.Round(time.Second))
	})
}

// inGitRepo reports whether dir is in a git work tree: it or a directory
// above it has a .git (a directory, or a linked worktree's file). A stat
// per level, never a git process: next runs hundreds of times a day.
func inGitRepo(dir string) bool {
	for {
		if _, err := os.Lstat(filepath.Join(dir, ".git")); err == nil {
			return true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return false
		}
		dir = parent
	}
}
