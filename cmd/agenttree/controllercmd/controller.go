package controllercmd

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/agenttree/agenttree/cmd/agenttree/cmdutil"
	"github.com/agenttree/agenttree/controller"
	"github.com/agenttree/agenttree/controller/metrics"
	"github.com/agenttree/agenttree/controller/nodes"
	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/forge"
	"github.com/agenttree/agenttree/internal/exitcode"
	"github.com/agenttree/agenttree/stages"
)

// ControllerOptions is what `controller` was asked.
type ControllerOptions struct {
	*cmdutil.App
	// Once runs one pass over the due issues, JSON printing its results.
	Once, JSON bool
	// IssueArg is the issue's id as given (--issue), "" for every issue.
	IssueArg string
	// LogFormat is text or json.
	LogFormat string
	// Interval is the time between passes, 0 for the config's.
	Interval time.Duration
	// HTTP is where the web board listens ("": no board); Public allows
	// an address that is not loopback.
	HTTP   string
	Public bool
	// setup shapes the controller before it runs: a node's, or one that
	// gives issues to nodes (state.nodes).
	setup func(*controller.Controller)
}

func newCmdController(a *cmdutil.App, runF func(context.Context, *ControllerOptions) error) *cobra.Command {
	opts := &ControllerOptions{App: a}
	cmd := &cobra.Command{
		Use:   "controller",
		Short: "Run the host controller: controller stages, CI, conflicts, PR watching, messages to agents",
		Long: "Run the host controller, a level-triggered loop that does what agents cannot: it runs the\n" +
			"hooks of controller stages (open the PR, wait for CI, check conflicts), steps issues back\n" +
			"with a message typed into the agent's tmux pane, watches PRs, and calls a person when a\n" +
			"budget is spent. All its state is on disk: stop it (Ctrl-C finishes the hook in flight) or\n" +
			"kill it at any moment, and start it again. With the state in etcd (state.backend), controllers on\n" +
			"any host elect one, and the others stand by until its lease ends.\n\n" +
			cmdutil.ExitStatus("0 stopped (with --once: nothing failed), 1 a pass failed (--once)",
				cmdutil.ExitUsageOrConfig+", or another controller already runs for this repository"),
		Example: "  agenttree controller\n  agenttree controller --once --issue 3\n  agenttree controller --interval 30s --log-format json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return controllerRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.Once, "once", false, "run one pass over the due issues and exit")
	cmd.Flags().StringVar(&opts.IssueArg, "issue", "", "work on this issue only")
	cmd.Flags().DurationVar(&opts.Interval, "interval", 0, "time between passes (default: controller.interval_s, 10s)")
	cmd.Flags().StringVar(&opts.LogFormat, "log-format", "text", "log format on stderr: text or json")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "with --once: print the pass's results as JSON")
	cmd.Flags().StringVar(&opts.HTTP, "http", "", "also serve the web board on this address, host:port (loopback only without --public; see `agenttree board`); its URL is in _agenttree/host/board.url, and on stdout at a terminal")
	cmd.Flags().BoolVar(&opts.Public, "public", false, "with --http: allow an address that is not loopback: everyone who reaches it and has the URL acts as you")
	return cmd
}

func controllerRun(ctx context.Context, opts *ControllerOptions) error {
	a := cmds{opts.App}
	if actor := engine.ActorFromEnv(a.Getenv); actor.Kind == engine.ActorAgent {
		return &cmdutil.ExitError{Code: exitcode.Waiting, Err: fmt.Errorf("the controller runs on the host, for people; %s cannot run it", actor)}
	}
	id := 0
	if opts.IssueArg != "" {
		var err error
		if id, err = cmdutil.ParseID(opts.IssueArg); err != nil {
			return err
		}
	}
	first, err := a.Engine(ctx)
	if err != nil {
		return err
	}
	if id != 0 {
		if _, err := first.Store.Get(id); err != nil {
			return err
		}
	}
	log := a.controllerLog(opts.LogFormat)
	if first.Config.State.Nodes.On {
		// The agents run on nodes; the one elected gives them their issues.
		reg, err := a.Nodes(ctx, first.Config)
		if err != nil {
			return err
		}
		share := &nodes.Share{Registry: reg, Places: true, Log: log}
		opts.setup = func(c *controller.Controller) { c.Homes = share.Homes }
	}
	if first.Config.State.Backend == stages.StateEtcd {
		return a.elected(ctx, opts, first, id, log)
	}
	unlock, err := controller.Lock(first.Store.Root())
	if errors.Is(err, controller.ErrRunning) {
		return &cmdutil.ExitError{Code: exitcode.Usage, Err: err}
	}
	if err != nil {
		return err
	}
	defer unlock()
	return a.control(ctx, opts, a.Reloader(ctx, first), first.Store.Root(), id, log, nil)
}

// control runs the controller over the engines load gives, fenced by
// fence when it is not nil: one pass (--once), or the loop with the
// agents' socket and the board until ctx ends.
func (a cmds) control(ctx context.Context, opts *ControllerOptions, load func() (*engine.Engine, error), root string, id int, log *slog.Logger, fence func(context.Context) error) error {
	// One issue named: it is looked at on every pass, whatever its
	// polling state says.
	c := &controller.Controller{Load: load, Issue: id, Eager: id != 0, Interval: opts.Interval, Log: log, Fence: fence, BoundMemory: true}
	c.Metrics = metrics.New(c.Engine)
	if opts.setup != nil {
		opts.setup(c)
	}
	if !opts.Once {
		c.Log.Info("controller started", "state", root, "pid", os.Getpid())
		ctx, stop := context.WithCancel(ctx)
		defer stop()
		served, err := serveAgents(ctx, c, root, c.Log)
		if err != nil {
			return err
		}
		shown := func() {}
		if opts.HTTP != "" {
			if shown, err = a.serveBoard(ctx, c, root, opts); err != nil {
				stop()
				served()
				if shown != nil {
					shown()
				}
				return err
			}
		}
		err = c.Run(ctx)
		stop()
		served()
		shown()
		c.Log.Info("controller stopped", forgeRequests(c)...)
		return err
	}
	sum, err := c.Tick(ctx)
	if err != nil {
		return err
	}
	if err := a.printTick(sum, opts.JSON); err != nil {
		return err
	}
	if sum.Failed > 0 {
		return cmdutil.SilentExit(exitcode.Blocked)
	}
	return nil
}

func (a cmds) controllerLog(format string) *slog.Logger {
	level := slog.LevelInfo
	if a.Debug {
		level = slog.LevelDebug
	}
	opts := &slog.HandlerOptions{Level: level}
	if format == "json" {
		return slog.New(slog.NewJSONHandler(a.ErrOut, opts))
	}
	return slog.New(slog.NewTextHandler(a.ErrOut, opts))
}

// printTick prints what one pass did: one line per issue.
func (a cmds) printTick(sum controller.Summary, asJSON bool) error {
	if asJSON {
		results := sum.Results
		if results == nil {
			results = []*engine.Result{}
		}
		return a.PrintJSON(map[string]any{"due": sum.Due, "failed": sum.Failed, "results": results})
	}
	if sum.Due == 0 {
		fmt.Fprintln(a.Out, "nothing for the controller to do")
		return nil
	}
	for _, r := range sum.Results {
		a.PrintResult(r)
	}
	if len(sum.Results) == 0 {
		fmt.Fprintf(a.Out, "%d issue(s) looked at (messages, escalations); nothing moved\n", sum.Due)
	}
	return nil
}

// forgeRequests are the log attributes saying how many requests GitHub
// would have been sent, for a forge that counts them (the local forge).
func forgeRequests(c *controller.Controller) []any {
	e, err := c.Engine()
	if err != nil || e.Forge == nil {
		return nil
	}
	if rc, ok := forge.As[forge.RequestCounter](e.Forge); ok {
		return []any{"forge_requests", rc.Requests()}
	}
	return nil
}
