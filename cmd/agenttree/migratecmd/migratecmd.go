// Package migratecmd holds `migrate`: the issues' state moved from the
// store backend the config names to the other one (docs/ARCHITECTURE.md
// §8), checked at the destination as `verify` checks it.
package migratecmd

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/agenttree/agenttree/cmd/agenttree/cmdutil"
	"github.com/agenttree/agenttree/controller"
	"github.com/agenttree/agenttree/engine/issues/backend"
	"github.com/agenttree/agenttree/engine/issues/filestore"
	"github.com/agenttree/agenttree/engine/issues/transfer"
	"github.com/agenttree/agenttree/internal/exitcode"
	"github.com/agenttree/agenttree/stages"
)

// Commands are the group's top-level commands.
func Commands(a *cmdutil.App) []*cobra.Command {
	return []*cobra.Command{newCmdMigrate(a, nil)}
}

// Options is what `migrate` was asked.
type Options struct {
	*cmdutil.App
	// To is the backend the state goes to: files or etcd.
	To   string
	JSON bool
}

func newCmdMigrate(a *cmdutil.App, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{App: a}
	cmd := &cobra.Command{
		Use:   "migrate --to etcd|files",
		Short: "Move the issues' state to etcd or back to files, checked as verify checks it (people only)",
		Example: `  agenttree migrate --to etcd
  agenttree migrate --to files --json`,
		Long: "Copy every issue's state, log (its hash chain as it is), watch.yaml, records\n" +
			"set aside and outbox (the messages waiting and those delivered), and the last\n" +
			"id given, from where state.backend keeps them to the backend --to names\n" +
			"(state.etcd's cluster for etcd), then check every issue there as `agenttree\n" +
			"verify` does. Stage documents and sessions stay where they are. No controller\n" +
			"may run meanwhile; each issue is read under its lock.\n\n" +
			"The source is never changed or removed, and the config is not rewritten:\n" +
			"migrate prints the state: block to write, and how to remove the source once\n" +
			"the config says the new backend. Run it again after a stop, or after changes\n" +
			"made at the source since: issues already at the destination as the source\n" +
			"holds them are left alone, those it holds the start of are brought up. A\n" +
			"destination holding issues that are not the source's (made or changed there)\n" +
			"is refused, and nothing is written.\n\n" +
			cmdutil.ExitStatus("0 moved and consistent, 1 refused or not consistent at the destination, "+cmdutil.ExitUsage, cmdutil.ExitOnlyPerson),
		Args: cmdutil.MaximumNArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return migrateRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.To, "to", "", "the backend to move the state to: etcd or files")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print what was moved and checked as JSON")
	return cmd
}

// ends are a migration's source and destination.
type ends struct {
	cfg      *stages.Config
	from, to stages.StateBackend
	stateDir string
}

func migrateRun(ctx context.Context, opts *Options) error {
	a := opts.App
	if err := a.ForPeople("migrate is for people, and this is %s: it moves every issue's state"); err != nil {
		return err
	}
	e, err := readEnds(opts)
	if err != nil {
		return err
	}
	// The controller writes the issues: none may run while they are read,
	// and none starts until the migration is done.
	if holder, running := controller.Running(e.stateDir); running {
		return &cmdutil.ExitError{Code: exitcode.Waiting, Err: fmt.Errorf("a controller is running for this repository (%s); stop it, then run `agenttree migrate --to %s` again", holder, e.to)}
	}
	unlock, err := controller.Lock(e.stateDir)
	if err != nil {
		return &cmdutil.ExitError{Code: exitcode.Waiting, Err: fmt.Errorf("%w; then run `agenttree migrate --to %s` again", err, e.to)}
	}
	defer unlock()
	// One elected on another host holds no lock of this one: migrate is
	// elected itself, and holds the term until it is done, so that none
	// is elected meanwhile (its etcd writes are fenced by the term).
	term, err := a.CampaignWithin(ctx, e.cfg, cmdutil.ProcessName()+" (agenttree migrate)", 3*time.Second)
	var leads *cmdutil.LeadsError
	if errors.As(err, &leads) {
		return &cmdutil.ExitError{Code: exitcode.Waiting, Err: fmt.Errorf("%w; stop it, then run `agenttree migrate --to %s` again", err, e.to)}
	}
	if err != nil {
		return err
	}
	defer func() { _ = cmdutil.Resign(ctx, term) }()
	from, err := porter(ctx, a, e, e.from)
	if err != nil {
		return err
	}
	to, err := porter(ctx, a, e, e.to)
	if err != nil {
		return err
	}
	res, err := transfer.Run(ctx, transfer.Options{From: from, To: to, Root: e.stateDir})
	var ce *transfer.ConflictError
	switch {
	case errors.As(err, &ce):
		return &cmdutil.ExitError{Code: exitcode.Blocked, Err: fmt.Errorf("%w\nnothing was written, and nothing at the source changed; %s", err, e.conflictHint())}
	case err != nil && ctx.Err() != nil:
		return fmt.Errorf("%w\nnothing at the source changed, and the issues moved are whole; run `agenttree migrate --to %s` again to finish", err, e.to)
	case err != nil:
		return fmt.Errorf("%w\nnothing at the source changed; run `agenttree migrate --to %s` again once that is fixed", err, e.to)
	}
	out := e.report(res)
	if opts.JSON {
		err = a.PrintJSON(out)
	} else {
		e.print(a, out)
	}
	if err != nil {
		return err
	}
	if !res.OK {
		return cmdutil.SilentExit(exitcode.Blocked)
	}
	return nil
}

// readEnds reads the config and checks what --to asks of it.
func readEnds(opts *Options) (*ends, error) {
	to := stages.StateBackend(opts.To)
	if to != stages.StateFiles && to != stages.StateEtcd {
		return nil, &cmdutil.ExitError{Code: exitcode.Usage, Err: fmt.Errorf("--to %q: say where the state goes, `--to etcd` or `--to files`", opts.To)}
	}
	cfg, _, err := opts.LoadConfig()
	if err != nil {
		return nil, err
	}
	e := &ends{cfg: cfg, from: cfg.State.Backend, to: to, stateDir: cmdutil.StateDirOf(cfg.File)}
	if e.from == "" {
		e.from = stages.StateFiles
	}
	if e.from == to {
		return nil, &cmdutil.ExitError{Code: exitcode.Usage, Err: fmt.Errorf("the state is kept in %s already (state.backend in %s); migrate moves it from there to the other backend, `agenttree migrate --to %s`", to, cfg.File, other(to))}
	}
	if to == stages.StateEtcd && len(cfg.State.Etcd.Endpoints) == 0 {
		return nil, &cmdutil.ExitError{Code: exitcode.Usage, Err: fmt.Errorf("--to etcd needs the cluster: add `state: {etcd: {endpoints: [https://HOST:2379], tls: {...}}}` to %s, leaving `backend:` out until the state is moved (docs/CONFIG.md)", cfg.File)}
	}
	return e, nil
}

func other(b stages.StateBackend) stages.StateBackend {
	if b == stages.StateEtcd {
		return stages.StateFiles
	}
	return stages.StateEtcd
}

// porter opens backend b of the repository.
func porter(ctx context.Context, a *cmdutil.App, e *ends, b stages.StateBackend) (backend.Porter, error) {
	if b == stages.StateEtcd {
		return a.Etcd(ctx, e.cfg)
	}
	return filestore.Open(e.stateDir), nil
}
