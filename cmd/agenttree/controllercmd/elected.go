package controllercmd

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/agenttree/agenttree/cmd/agenttree/cmdutil"
	"github.com/agenttree/agenttree/controller"
	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/forge"
	"github.com/agenttree/agenttree/internal/exitcode"
	"github.com/agenttree/agenttree/stages"
)

// onceWait is how long `controller --once` waits to be elected before it
// says another controller leads.
const onceWait = 3 * time.Second

// elected runs the controller of a repository whose state is in etcd:
// one controller acts among those sharing the cluster, wherever they run
// (docs/ARCHITECTURE.md §8). It campaigns; elected, it runs as the
// controller while its term lasts; when the term ends (its lease lost:
// cut off from the cluster, or stalled longer than the lease) it stops
// starting work, resigns and campaigns again, a standby. It returns when
// ctx ends.
func (a cmds) elected(ctx context.Context, opts *ControllerOptions, first *engine.Engine, id int, log *slog.Logger) error {
	name := cmdutil.ProcessName()
	load := a.Reloader(ctx, first)
	if opts.Once {
		term, err := a.CampaignWithin(ctx, first.Config, name, onceWait)
		var leads *cmdutil.LeadsError
		if errors.As(err, &leads) {
			return &cmdutil.ExitError{Code: exitcode.Usage, Err: fmt.Errorf("%w: %w; stop it first, or see what it does with `agenttree status`", controller.ErrRunning, err)}
		}
		if err != nil {
			return err
		}
		err = a.lead(ctx, opts, term, sameCluster(first.Config, load), first.Store.Root(), id, log)
		return errors.Join(err, cmdutil.Resign(ctx, term))
	}
	retry := time.Second
	for {
		term, err := a.Campaign(ctx, first.Config, name, func(who string) {
			log.Info("standing by: another controller leads; this one takes over when its lease ends", "leader", who)
		})
		if ctx.Err() != nil {
			if term != nil {
				_ = cmdutil.Resign(ctx, term)
			}
			return nil
		}
		if err != nil {
			// A cluster out of reach, a lease lost while standing by, a
			// raft election under the campaign: the next campaign may
			// win, and this controller must not be the one that left.
			log.Warn("campaign failed; campaigning again", "err", err, "in", retry)
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(retry):
			}
			retry = min(2*retry, 30*time.Second)
			continue
		}
		retry = time.Second
		log.Info("elected: this controller leads", "name", name)
		err = a.lead(ctx, opts, term, sameCluster(first.Config, load), first.Store.Root(), id, log)
		load = a.Reloader(ctx, nil)
		rerr := cmdutil.Resign(ctx, term)
		if err != nil || ctx.Err() != nil {
			return err
		}
		log.Warn("this controller's term ended; it stands by for the next election", "resign", rerr)
	}
}

// sameCluster is load refusing a config whose state is kept elsewhere than
// first's: the store the term fences is first's cluster and prefix, and a
// store dialled anew would write unfenced (docs/ARCHITECTURE.md §8). The
// controller keeps its last good config and says why.
func sameCluster(first *stages.Config, load func() (*engine.Engine, error)) func() (*engine.Engine, error) {
	want := fmt.Sprintf("%q", cmdutil.EtcdConfig(first))
	return func() (*engine.Engine, error) {
		e, err := load()
		if err != nil {
			return nil, err
		}
		if e.Config.State.Backend != stages.StateEtcd || fmt.Sprintf("%q", cmdutil.EtcdConfig(e.Config)) != want {
			return nil, fmt.Errorf("%s: state: now names another place for the issues' state than the controller was elected on; the controller keeps the one it has: stop it and start it again to move", e.Config.File)
		}
		return e, nil
	}
}

// lead runs the controller while term lasts: its store writes are fenced
// already (cmdutil.App.Campaign), its forge's changes and its deliveries
// ask the term first. The state directory's controller lock is taken
// too, so that this host's commands see a controller runs; but the
// election is what keeps two from acting, and a controller of this host
// whose term ended may hold the lock a while (frozen, or still
// stopping), so one elected waits lockWait for it and then leads
// without it.
func (a cmds) lead(ctx context.Context, opts *ControllerOptions, term cmdutil.Term, load func() (*engine.Engine, error), root string, id int, log *slog.Logger) error {
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	go func() {
		select {
		case <-term.Done():
			log.Warn("this controller's term ended: its lease was not renewed in time; it starts nothing more")
			stop()
			// Resigned now, not once the work in flight is done: its
			// session would keep the lease alive, and every standby
			// waiting, meanwhile. What it still writes is fenced.
			_ = cmdutil.Resign(ctx, term)
		case <-ctx.Done():
		}
	}()
	unlock, err := lockWithin(ctx, root, lockWait)
	switch {
	case ctx.Err() != nil:
		return nil
	case errors.Is(err, controller.ErrRunning):
		log.Warn("leading without this host's controller lock, which a controller whose term ended still holds", "err", err)
	case err != nil:
		return err
	default:
		defer unlock()
	}
	fenced := func() (*engine.Engine, error) {
		e, err := load()
		if err == nil && e.Forge != nil {
			e.Forge = forge.Fenced(e.Forge, term)
		}
		return e, err
	}
	err = a.control(ctx, opts, fenced, root, id, log, term.Held)
	select {
	case <-term.Done():
		return nil // what failed for it is the term's end, said above
	default:
		return err
	}
}

// lockWait is how long a controller just elected waits for this host's
// controller lock.
const lockWait = 3 * time.Second

// lockWithin takes root's controller lock, trying again each 200 ms
// while another process of this host holds it, for at most wait.
func lockWithin(ctx context.Context, root string, wait time.Duration) (func(), error) {
	end := time.Now().Add(wait)
	for {
		unlock, err := controller.Lock(root)
		if !errors.Is(err, controller.ErrRunning) || time.Now().After(end) {
			return unlock, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}
