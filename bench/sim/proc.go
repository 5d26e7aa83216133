//go:build etcd

package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/agenttree/agenttree/controller"
	"github.com/agenttree/agenttree/controller/leader"
	"github.com/agenttree/agenttree/controller/nodes"
	"github.com/agenttree/agenttree/controller/nodes/etcdnodes"
	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/engine/issues/etcdstore"
	"github.com/agenttree/agenttree/forge"
	"github.com/agenttree/agenttree/forge/github"
	"github.com/agenttree/agenttree/stages/load"
)

// proc is what one process of agenttree holds: its own etcd client, the
// issue store over it, its state directory (its host's files: outboxes,
// sessions) and its engine with the GitHub forge. Killing it is
// cancelling its context and closing its client: nothing is resigned or
// revoked, as when its host dies.
type proc struct {
	name  string
	ctx   context.Context
	stop  context.CancelFunc
	cli   *clientv3.Client
	store *etcdstore.Store
	gh    *github.Client
	eng   *engine.Engine
	st    *issues.Store
	w     *world
}

// open starts process name of world w, its state directory under w.dir.
func (w *world) open(parent context.Context, name string) (*proc, error) {
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{w.endpoint}, DialTimeout: 10 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		return nil, err
	}
	p := &proc{name: name, cli: cli, w: w}
	p.ctx, p.stop = context.WithCancel(parent)
	root := filepath.Join(w.dir, name, "_agenttree")
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, err
	}
	p.store = etcdstore.New(cli, w.prefix)
	if p.st, err = issues.OpenWith(root, p.store); err != nil {
		return nil, err
	}
	if p.gh, err = github.New(p.ctx, github.Options{Repo: w.srv.Owner + "/" + w.srv.Name, Host: "github.com", Token: w.srv.Token, BaseURL: w.srv.URL}); err != nil {
		return nil, err
	}
	p.eng, err = p.engine(p.gh)
	return p, err
}

// engine is p's engine over forge f, as `agenttree` opens it.
func (p *proc) engine(f forge.Forge) (*engine.Engine, error) {
	reg := registry()
	cfg, err := load.File(p.w.config, reg)
	if err != nil {
		return nil, fmt.Errorf("the simulation's config %s does not load: %w", p.w.config, err)
	}
	return engine.New(cfg, p.st, reg, nil, engine.WithForge(f)), nil
}

// kill stops p abruptly.
func (p *proc) kill() {
	p.stop()
	_ = p.cli.Close()
}

// ctrl is a controller process: it campaigns, and while elected runs
// the controller as `agenttree controller` does over etcd with nodes
// (cmd/agenttree/controllercmd: elected.go, controller.go): its store
// writes fenced by the term, its forge asking the term, the issues given
// to nodes. Its ticks are the driver's to call, on the simulated clock.
type ctrl struct {
	*proc
	w *world

	mu   sync.Mutex
	term *leader.Term
	c    *controller.Controller
	// unwatch stops the controller's watches of the issues.
	unwatch func()
	// won is when it was elected, for the failover's figures.
	won time.Time
	// first: no tick of its term has run yet.
	first bool
}

// campaign runs until p is killed: elected, it leads until its term
// ends, then resigns and campaigns again.
func (c *ctrl) campaign() {
	for c.ctx.Err() == nil {
		term, err := leader.Campaign(c.ctx, leader.Config{Client: c.cli, Prefix: c.w.prefix + "/leader", Name: c.name}, nil)
		if err != nil {
			select {
			case <-c.ctx.Done():
			case <-time.After(time.Second):
			}
			continue
		}
		c.store.Fence(term.Key(), term.Rev())
		e, err := c.engine(forge.Fenced(c.gh, term))
		if err != nil {
			_ = term.Resign(c.ctx)
			continue
		}
		share := &nodes.Share{Registry: etcdnodes.New(c.cli, c.w.prefix), Places: true, Log: slog.New(slog.DiscardHandler)}
		ctl := &controller.Controller{Load: func() (*engine.Engine, error) { return e, nil }, Now: c.w.clk.Now,
			Homes: share.Homes, Fence: term.Held}
		unwatch := ctl.WatchIssues(c.ctx)
		c.mu.Lock()
		c.term, c.c, c.unwatch, c.won, c.first = term, ctl, unwatch, time.Now(), true
		c.mu.Unlock()
		select {
		case <-term.Done():
		case <-c.ctx.Done():
			return // killed: nothing resigned
		}
		c.mu.Lock()
		c.term, c.c = nil, nil
		c.mu.Unlock()
		unwatch()
		_ = term.Resign(c.ctx)
	}
}

// leading is p's controller while its term holds, else nil.
func (c *ctrl) leading() (*controller.Controller, *leader.Term) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.term == nil || c.ctx.Err() != nil || c.term.Held(c.ctx) != nil {
		return nil, nil
	}
	return c.c, c.term
}

// node is a node process (cmd/agenttree/controllercmd/node.go): joined
// under its lease, a controller that keeps its issues' agents and makes
// no pass.
type node struct {
	*proc
	c *controller.Controller
}

func (w *world) startNode(ctx context.Context, name string) (*node, error) {
	p, err := w.open(ctx, name)
	if err != nil {
		return nil, err
	}
	reg := etcdnodes.New(p.cli, w.prefix)
	if _, err := reg.Join(p.ctx, nodes.Node{Name: name, Host: "sim " + name, Capacity: w.o.agents, Since: time.Now().UTC()}, 0); err != nil {
		return nil, err
	}
	share := &nodes.Share{Registry: reg, Self: name, Log: slog.New(slog.DiscardHandler)}
	n := &node{proc: p, c: &controller.Controller{Load: func() (*engine.Engine, error) { return p.eng, nil }, Now: w.clk.Now,
		Node: true, Homes: share.Homes, NoWatch: true}}
	n.c.WatchIssues(p.ctx)
	return n, nil
}
