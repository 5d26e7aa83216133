package sessioncmd

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/agenttree/agenttree/cmd/agenttree/cmdutil"
	"github.com/agenttree/agenttree/cmd/agenttree/inboxcmd"
	"github.com/agenttree/agenttree/controller/delivery"
	"github.com/agenttree/agenttree/sessions"
	"github.com/agenttree/agenttree/stages"
)

// sessionCmds are the commands that start, attach to, stop and list
// agents' tmux sessions.
func sessionCmds(a *cmdutil.App) []*cobra.Command {
	return []*cobra.Command{newCmdStart(a, nil), newCmdAttach(a, nil), newCmdStop(a, nil), newCmdAgents(a, nil), newCmdAssign(a, nil)}
}

// sessions opens the session manager, for people only: agents do not
// start agents.
func (a cmds) sessions(ctx context.Context, what string) (*sessions.Manager, error) {
	if err := a.ForPeople("only a person %s agent sessions; %s cannot", what); err != nil {
		return nil, err
	}
	e, err := a.Engine(ctx)
	if err != nil {
		return nil, err
	}
	m := sessions.New(e, delivery.TmuxClient(e))
	m.Log = a.Logger()
	return m, nil
}

// startView is what `agenttree start` did.
type startView struct {
	*sessions.Start
	// Delivered says the first message was typed into the pane; else it
	// waits in the outbox for the controller (Reason says why).
	Delivered bool   `json:"delivered"`
	Reason    string `json:"reason,omitempty"`
}

// StartOptions is what `start` was asked.
type StartOptions struct {
	*cmdutil.App
	// IssueArg is the issue's id as given; Role the agent's role, "" for
	// the role of the issue's stage.
	IssueArg, Role string
	Start          sessions.Options
	JSON           bool
}

func newCmdStart(a *cmdutil.App, runF func(context.Context, *StartOptions) error) *cobra.Command {
	opts := &StartOptions{App: a}
	cmd := &cobra.Command{
		Use:   "start ID",
		Short: "Start the agent of an issue in a tmux session, in the issue's worktree (people only)",
		Long: "Fetch, then make or reuse issue ID's worktree on its branch (under worktrees.dir),\n" +
			"start a tmux session named by tmux.session running the agent its role declares\n" +
			"(roles: and agents: in the config), with AGENTTREE_ISSUE and AGENTTREE_ROLE in its\n" +
			"environment and a session token in a file only the agent's user can read\n" +
			"(AGENTTREE_TOKEN_FILE; it acts only for the session's processes), and give it the stage's\n" +
			"instructions as its first message. A live session is left alone and reported;\n" +
			"--restart replaces it. A start that fails leaves nothing behind.\n\n" +
			cmdutil.ExitStatus("0 started or running, "+cmdutil.ExitUsageOrConfig+", "+cmdutil.ExitNotPerson),
		Example: "  agenttree start 3\n  agenttree start 3 --agent codex --restart",
		Args:    cmdutil.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.IssueArg = args[0]
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return startRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Role, "role", "", "the agent's role (default: the role of the issue's stage)")
	cmd.Flags().StringVar(&opts.Start.Agent, "agent", "", "the agent to start (default: the role's first)")
	cmd.Flags().BoolVar(&opts.Start.Restart, "restart", false, "replace a live session")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the result as JSON")
	return cmd
}

func startRun(ctx context.Context, opts *StartOptions) error {
	a := cmds{opts.App}
	id, err := cmdutil.ParseID(opts.IssueArg)
	if err != nil {
		return err
	}
	m, err := a.sessions(ctx, "starts")
	if err != nil {
		return err
	}
	if err := a.StartsHere(ctx, m.Engine, id); err != nil {
		return err
	}
	start := opts.Start
	start.Role = stages.Role(opts.Role)
	s := a.Spin(fmt.Sprintf("starting issue %d's agent", id))
	res, err := m.Start(ctx, id, start)
	s.Stop()
	if err != nil {
		return err
	}
	v := startView{Start: res}
	if res.Message != "" {
		v.Delivered, v.Reason = a.deliverFirst(ctx, m, id, res)
	}
	if opts.JSON {
		return a.PrintJSON(v)
	}
	printStart(a.Out, v)
	return nil
}

// deliverFirst delivers the issue's outbox as the controller does, the
// first message among it; what cannot be delivered now stays queued.
func (a cmds) deliverFirst(ctx context.Context, m *sessions.Manager, id int, res *sessions.Start) (bool, string) {
	iss, err := m.Engine.Store.Get(id)
	if err != nil {
		return false, err.Error()
	}
	_, err = delivery.Deliver(ctx, m.Engine, iss, m.Tmux, a.Logger(), nil)
	if inboxcmd.Queued(m.Engine.Outbox(id), res.Message) {
		return false, fmt.Sprintf("%s; `agenttree controller` delivers it (see `agenttree inbox %d`)", inboxcmd.NotDelivered(err, res.Session.Session), id)
	}
	return true, ""
}

func printStart(w io.Writer, v startView) {
	rec := v.Session
	if v.State == sessions.Running {
		if rec == nil {
			fmt.Fprintln(w, "a tmux session for this issue is running already (not started by agenttree); --restart replaces it")
			return
		}
		fmt.Fprintf(w, "issue %d: tmux session %s is running already (agent %s, role %s); --restart replaces it\n", rec.Issue, rec.Session, rec.Agent, rec.Role)
		return
	}
	fmt.Fprintf(w, "issue %d: %s tmux session %s: agent %s, role %s, in %s (branch %s)\n", rec.Issue, v.State, rec.Session, rec.Agent, rec.Role, rec.Worktree, rec.Branch)
	switch {
	case v.Message == "":
		fmt.Fprintln(w, "no instructions sent: the issue is at another role's stage; the agent is told when it gets to one of its own")
	case v.Delivered:
		fmt.Fprintln(w, "the stage's instructions were typed into its pane")
	default:
		fmt.Fprintf(w, "the stage's instructions are queued: %s\n", cmdutil.SafeText(v.Reason))
	}
	fmt.Fprintf(w, "watch it: agenttree attach %d\n", rec.Issue)
}

// AttachOptions is what `attach` was asked.
type AttachOptions struct {
	*cmdutil.App
	// IssueArg is the issue's id as given.
	IssueArg string
}

func newCmdAttach(a *cmdutil.App, runF func(context.Context, *AttachOptions) error) *cobra.Command {
	opts := &AttachOptions{App: a}
	return &cobra.Command{
		Use:     "attach ID",
		Short:   "Attach this terminal to the tmux session of an issue's agent (people only)",
		Example: `  agenttree attach 3`,
		Long: "Attach to issue ID's agent session, on the config's tmux server. Without a terminal,\n" +
			"print the command that attaches instead.",
		Args: cmdutil.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.IssueArg = args[0]
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return attachRun(cmd.Context(), opts)
		},
	}
}

func attachRun(ctx context.Context, opts *AttachOptions) error {
	a := cmds{opts.App}
	id, err := cmdutil.ParseID(opts.IssueArg)
	if err != nil {
		return err
	}
	m, err := a.sessions(ctx, "attaches to")
	if err != nil {
		return err
	}
	rec, err := m.Record(id)
	if err != nil {
		return err
	}
	argv := []string{"tmux"}
	if m.Tmux.Socket != "" {
		argv = append(argv, "-S", m.Tmux.Socket)
	}
	argv = append(argv, "attach-session", "-t", "="+rec.Session+":")
	in, ok := a.In.(*os.File)
	if !ok || !term.IsTerminal(int(in.Fd())) {
		fmt.Fprintf(a.Out, "not a terminal; to attach to issue %d's agent, run:\n  %s\n", id, shellJoin(argv))
		return nil
	}
	// Not in a process group of its own (proc.Group): tmux must be
	// in the terminal's foreground group to read from it.
	c := exec.CommandContext(ctx, argv[0], argv[1:]...)
	c.Stdin, c.Stdout, c.Stderr = in, a.Out, a.ErrOut
	if err := c.Run(); err != nil {
		return fmt.Errorf("attach to tmux session %s: %w", rec.Session, err)
	}
	return nil
}

// shellJoin quotes argv for a person to paste into a shell.
func shellJoin(argv []string) string {
	q := make([]string, len(argv))
	for i, s := range argv {
		if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=%:@+") == "" {
			q[i] = s
			continue
		}
		q[i] = "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}

// StopOptions is what `stop` was asked.
type StopOptions struct {
	*cmdutil.App
	// IssueArg is the issue's id as given.
	IssueArg string
	JSON     bool
}

func newCmdStop(a *cmdutil.App, runF func(context.Context, *StopOptions) error) *cobra.Command {
	opts := &StopOptions{App: a}
	cmd := &cobra.Command{
		Use:     "stop ID",
		Short:   "End the tmux session of an issue's agent, keeping its worktree (people only)",
		Example: `  agenttree stop 3`,
		Long: "End issue ID's agent session and revoke its session token. The worktree stays, with\n" +
			"whatever work is in it; `agenttree start ID` starts an agent there again.",
		Args: cmdutil.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.IssueArg = args[0]
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return stopRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the session's record as JSON")
	return cmd
}

func stopRun(ctx context.Context, opts *StopOptions) error {
	a := cmds{opts.App}
	id, err := cmdutil.ParseID(opts.IssueArg)
	if err != nil {
		return err
	}
	m, err := a.sessions(ctx, "stops")
	if err != nil {
		return err
	}
	rec, err := m.Stop(ctx, id)
	if err != nil {
		return err
	}
	if opts.JSON {
		return a.PrintJSON(rec)
	}
	fmt.Fprintf(a.Out, "issue %d: tmux session %s ended; its worktree stays at %s\n", id, rec.Session, rec.Worktree)
	return nil
}

// agentView is one session in `agenttree agents --json`.
type agentView struct {
	sessions.Status
	IdleS int64 `json:"idle_s"`
}

// AgentsOptions is what `agents` was asked.
type AgentsOptions struct {
	*cmdutil.App
	JSON bool
}

func newCmdAgents(a *cmdutil.App, runF func(context.Context, *AgentsOptions) error) *cobra.Command {
	opts := &AgentsOptions{App: a}
	cmd := &cobra.Command{
		Use:   "agents",
		Short: "List the agents' sessions: issue, role, agent, alive, idle for, last line (people only)",
		Example: `  agenttree agents
  agenttree agents --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return agentsRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print as JSON")
	return cmd
}

func agentsRun(ctx context.Context, opts *AgentsOptions) error {
	a := cmds{opts.App}
	m, err := a.sessions(ctx, "lists")
	if err != nil {
		return err
	}
	list, err := m.List(ctx)
	if err != nil && list == nil {
		return err
	}
	if err != nil {
		fmt.Fprintln(a.ErrOut, "warning:", err)
	}
	if opts.JSON {
		out := make([]agentView, len(list))
		for i, s := range list {
			out[i] = agentView{Status: s, IdleS: int64(s.Idle / time.Second)}
		}
		return a.PrintJSON(out)
	}
	printAgents(a.Out, list)
	return nil
}

func printAgents(w io.Writer, list []sessions.Status) {
	if len(list) == 0 {
		fmt.Fprintln(w, "no agent sessions; start one with `agenttree start ID`")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ISSUE\tROLE\tAGENT\tSESSION\tSTATE\tIDLE\tLAST LINE")
	for _, s := range list {
		idle := "-"
		if s.Alive {
			idle = cmdutil.Age(s.Idle)
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\n", s.Issue, s.Role, s.Agent, s.Session, state(s), idle, cmdutil.SafeText(s.LastLine))
	}
	_ = tw.Flush()
}

// state says whether a session runs, and if not, why.
func state(s sessions.Status) string {
	switch {
	case s.Alive:
		return "alive"
	case !s.Stopped.IsZero():
		return "stopped"
	case s.Exited:
		if s.ExitStatus < 0 {
			return "exited"
		}
		return fmt.Sprintf("exited (%d)", s.ExitStatus)
	}
	return "gone"
}
