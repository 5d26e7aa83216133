package controllercmd

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"

	"github.com/agenttree/agenttree/cmd/agenttree/cmdutil"
	"github.com/agenttree/agenttree/controller"
	"github.com/agenttree/agenttree/controller/nodes"
	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/internal/atomicfile"
	"github.com/agenttree/agenttree/internal/exitcode"
)

// NodeOptions is what `node` was asked.
type NodeOptions struct {
	*cmdutil.App
	// Name is the node's ("": this host's name).
	Name string
	// Labels: the node takes only issues carrying one of them.
	Labels []string
	// Capacity is how many unfinished issues it takes (0: state.nodes.capacity).
	Capacity  int
	LogFormat string
	Interval  time.Duration
}

func newCmdNode(a *cmdutil.App, runF func(context.Context, *NodeOptions) error) *cobra.Command {
	opts := &NodeOptions{App: a}
	cmd := &cobra.Command{
		Use:   "node",
		Short: "Run this host's agents: the issues the elected controller gives this node (state.nodes)",
		Long: "Run a node: on a host that runs agents for a repository whose state is in etcd and whose\n" +
			"config writes `state.nodes`. The elected controller (`agenttree controller`, on any host) gives\n" +
			"each unfinished issue to a node: the one its `node:NAME` label names, else one whose --label it\n" +
			"carries (a node without labels takes any), the one with the most room. The node starts and keeps\n" +
			"those issues' agents in this host's tmux, types their messages into their panes and answers\n" +
			"their `next` on this checkout's socket; the controller does the forge's work. A node killed is\n" +
			"seen gone within its 10 s lease; its issues stay its own until a person moves them with\n" +
			"`agenttree assign ID --node NAME`.\n\n" +
			cmdutil.ExitStatus("0 stopped", cmdutil.ExitUsageOrConfig+", or a node or controller already runs for this checkout"),
		Example: "  agenttree node\n  agenttree node --name gpu-1 --label gpu --capacity 4",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return nodeRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Name, "name", "", "the node's name, unique among the repository's nodes (default: this host's name)")
	cmd.Flags().StringSliceVar(&opts.Labels, "label", nil, "take only issues carrying this label (repeat for more; default: any issue)")
	cmd.Flags().IntVar(&opts.Capacity, "capacity", 0, "how many unfinished issues this node takes (default: state.nodes.capacity)")
	cmd.Flags().DurationVar(&opts.Interval, "interval", 0, "time between passes (default: controller.interval_s, 10s)")
	cmd.Flags().StringVar(&opts.LogFormat, "log-format", "text", "log format on stderr: text or json")
	return cmd
}

func nodeRun(ctx context.Context, opts *NodeOptions) error {
	a := cmds{opts.App}
	if actor := engine.ActorFromEnv(a.Getenv); actor.Kind == engine.ActorAgent {
		return &cmdutil.ExitError{Code: exitcode.Waiting, Err: fmt.Errorf("a node runs on the host, for people; %s cannot run it", actor)}
	}
	first, err := a.Engine(ctx)
	if err != nil {
		return err
	}
	reg, err := a.Nodes(ctx, first.Config)
	if err != nil {
		return &cmdutil.ExitError{Code: exitcode.Usage, Err: err}
	}
	n, err := nodeOf(opts, first)
	if err != nil {
		return &cmdutil.ExitError{Code: exitcode.Usage, Err: err}
	}
	root := first.Store.Root()
	// One process keeps this checkout's agents and answers on its socket.
	unlock, err := controller.Lock(root)
	if errors.Is(err, controller.ErrRunning) {
		return &cmdutil.ExitError{Code: exitcode.Usage, Err: err}
	}
	if err != nil {
		return err
	}
	defer unlock()
	log := a.controllerLog(opts.LogFormat).With("node", n.Name)
	member, err := join(ctx, reg, n, log)
	if err != nil || member == nil {
		return err
	}
	// `agenttree start` here reads which node runs this checkout's agents.
	if err := atomicfile.Write(first.Store.Layout().Node(), []byte(n.Name+"\n"), 0o644); err != nil {
		member.Leave()
		return err
	}
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	var joined atomic.Value // the cmdutil.NodeMember of now
	joined.Store(member)
	go func() { stop(stayJoined(ctx, reg, n, &joined, log)) }()
	share := &nodes.Share{Registry: reg, Self: n.Name, Log: log, Joined: func() bool {
		select {
		case <-joined.Load().(cmdutil.NodeMember).Done():
			return false
		default:
			return true
		}
	}}
	// A node asks no forge: the elected controller watches it and does
	// its work (docs/ARCHITECTURE.md §8, "Nodes").
	copts := &ControllerOptions{App: opts.App, Interval: opts.Interval, LogFormat: opts.LogFormat,
		setup: func(c *controller.Controller) { c.Node, c.Homes, c.NoWatch = true, share.Homes, true }}
	log.Info("node started", "labels", strings.Join(n.Labels, ","), "capacity", n.Capacity)
	err = a.control(ctx, copts, a.Reloader(ctx, first), root, 0, log, nil)
	if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) {
		return cause // it could not join again
	}
	return err
}

// nodeOf is the node opts describe.
func nodeOf(opts *NodeOptions, e *engine.Engine) (nodes.Node, error) {
	host, _ := os.Hostname()
	n := nodes.Node{Name: opts.Name, Host: cmdutil.ProcessName(), Labels: opts.Labels, Capacity: opts.Capacity, Since: time.Now().UTC().Truncate(time.Second)}
	if n.Name == "" {
		n.Name, _, _ = strings.Cut(host, ".")
	}
	if err := nodes.ValidName(n.Name); err != nil {
		return n, fmt.Errorf("%w; name the node with --name", err)
	}
	for _, l := range n.Labels {
		if strings.TrimSpace(l) == "" || strings.HasPrefix(l, nodes.LabelPrefix) {
			return n, fmt.Errorf("bad --label %q: name a label issues carry (not empty, not %q: that one names a node)", l, nodes.LabelPrefix+"NAME")
		}
	}
	switch {
	case n.Capacity < 0:
		return n, fmt.Errorf("bad --capacity %d: want at least 1", n.Capacity)
	case n.Capacity == 0:
		n.Capacity = e.Config.State.Nodes.Capacity
	}
	return n, nil
}

// joinRetry is the longest wait between two tries to join.
const joinRetry = 10 * time.Second

// join names n among the nodes alive, trying again while the cluster is
// out of reach, and while a node of its name is alive for at most one
// lease and a little (this host's last run, killed: its lease has not
// ended). nil, nil when ctx ended first.
func join(ctx context.Context, reg cmdutil.NodeRegistry, n nodes.Node, log *slog.Logger) (cmdutil.NodeMember, error) {
	takenUntil := time.Now().Add(nodes.DefaultTTL + 3*time.Second)
	wait := 500 * time.Millisecond
	for said := false; ; {
		m, err := reg.Join(ctx, n, nodes.DefaultTTL)
		switch {
		case err == nil:
			log.Info("joined the nodes", "host", n.Host)
			return m, nil
		case ctx.Err() != nil:
			return nil, nil
		case errors.Is(err, nodes.ErrTaken) && time.Now().After(takenUntil):
			return nil, &cmdutil.ExitError{Code: exitcode.Usage, Err: err}
		case !said:
			log.Warn("cannot join the nodes yet; trying again", "err", err)
			said = true
		}
		select {
		case <-ctx.Done():
			return nil, nil
		case <-time.After(wait):
		}
		wait = min(2*wait, joinRetry)
	}
}

// stayJoined joins again each time the node's lease ends (cut off from
// the cluster longer than the lease), until ctx ends; meanwhile the
// elected controller may see it gone, and the node neither starts nor
// stops an agent (Share.Joined). A name another node took meanwhile
// ends the node, with that error: two nodes of one name would both keep
// its issues' agents.
func stayJoined(ctx context.Context, reg cmdutil.NodeRegistry, n nodes.Node, joined *atomic.Value, log *slog.Logger) error {
	for {
		m := joined.Load().(cmdutil.NodeMember)
		select {
		case <-ctx.Done():
			return nil // the member leaves with ctx (Registry.Join)
		case <-m.Done():
		}
		log.Warn("this node's lease ended: it was cut off from the cluster; joining again")
		m, err := join(ctx, reg, n, log)
		if err != nil {
			log.Error("this node cannot join again: it stops", "err", err)
			return err
		}
		if m == nil {
			return nil // ctx ended
		}
		joined.Store(m)
	}
}
