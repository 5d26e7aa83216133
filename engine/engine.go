// Package engine moves issues through the pipeline of one config, and is
// the only writer of issue state: it says who may act, takes the issue's
// lock and hands the move to engine/transition, which runs the gates,
// records the move on the stage machine and commits it through the store
// (docs/ARCHITECTURE.md §3, §4). Every command, a person's or an agent's
// through the controller's socket, comes through here.
package engine

import (
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"

	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/engine/machine"
	"github.com/agenttree/agenttree/engine/notice"
	"github.com/agenttree/agenttree/engine/transition"
	"github.com/agenttree/agenttree/forge"
	"github.com/agenttree/agenttree/hooks"
	"github.com/agenttree/agenttree/internal/gitx"
	"github.com/agenttree/agenttree/stages"
)

// Engine moves issues through the pipeline of one config.
type Engine struct {
	Config *stages.Config
	Store  *issues.Store
	Hooks  *hooks.Registry
	Log    *slog.Logger
	// WorkDir is the git work tree hooks run in (the repository root).
	WorkDir string
	// Forge is where PRs live; nil when the config's hooks need none.
	Forge forge.Forge
	// Git opens git in a work tree, for the PR hooks.
	Git func(dir string) *gitx.Repo
	// maxChain bounds the moves that entry and completion hooks make in
	// one command, so a misconfigured loop cannot spin forever.
	maxChain int

	mu       sync.Mutex
	machines map[*stages.Flow]*machine.Machine
	notices  *notice.Book
	deps     *transition.Deps
}

// Option sets what an engine works with besides its config, store and
// hooks, when New makes it.
type Option func(*Engine)

// WithForge is where PRs live (Engine.Forge).
func WithForge(f forge.Forge) Option { return func(e *Engine) { e.Forge = f } }

// WithGit opens git in a work tree, for the PR hooks (Engine.Git).
func WithGit(open func(dir string) *gitx.Repo) Option { return func(e *Engine) { e.Git = open } }

// WithWorkDir is the git work tree hooks run in, when it is not the
// directory of the config ("" keeps that).
func WithWorkDir(dir string) Option {
	return func(e *Engine) {
		if dir != "" {
			e.WorkDir = dir
		}
	}
}

// New returns an engine over cfg and store, with reg's hooks.
func New(cfg *stages.Config, store *issues.Store, reg *hooks.Registry, log *slog.Logger, opts ...Option) *Engine {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	e := &Engine{Config: cfg, Store: store, Hooks: reg, Log: log, WorkDir: filepath.Dir(cfg.File), maxChain: 8,
		machines: map[*stages.Flow]*machine.Machine{}}
	for _, o := range opts {
		o(e)
	}
	e.notices = &notice.Book{Config: cfg, IssueDir: store.Dir, SkillsDir: filepath.Join(store.Root(), "skills"),
		Vars: e.instructionVars}
	e.deps = &transition.Deps{Config: cfg, Store: store, Hooks: reg, Log: log, Forge: func() forge.Forge { return e.Forge }, MaxChain: e.maxChain, Notices: e.notices,
		Env: e.hookEnv, Snapshot: e.Snapshot, Outbox: e.Outbox}
	return e
}

// hookEnv is what hooks see of the world.
func (e *Engine) hookEnv(dryRun bool) *hooks.Env {
	return &hooks.Env{Forge: e.Forge, Git: e.Git, Config: e.Config, Remote: gitx.DefaultRemote, Log: e.Log, DryRun: dryRun}
}

// Machine returns the stage machine of a flow, built on first use.
func (e *Engine) Machine(flow *stages.Flow) *machine.Machine {
	e.mu.Lock()
	defer e.mu.Unlock()
	m, ok := e.machines[flow]
	if !ok {
		m = machine.New(flow, e.Hooks)
		e.machines[flow] = m
	}
	return m
}

func (e *Engine) locate(iss *issues.Issue) (*stages.Flow, *stages.Node, error) {
	flow, err := e.Config.Flow(iss.Flow)
	if err != nil {
		return nil, nil, fmt.Errorf("issue %d: %w", iss.ID, err)
	}
	node, ok := e.Config.Node(iss.Stage)
	if !ok || node.Path != iss.Stage {
		return nil, nil, fmt.Errorf("issue %d is at stage %q, which %s does not declare; put the stage back or move the issue", iss.ID, iss.Stage, e.Config.File)
	}
	if flow.Index(node.Path) < 0 {
		return nil, nil, fmt.Errorf("issue %d is at stage %q, which is not part of its flow %q", iss.ID, iss.Stage, flow.Name)
	}
	return flow, node, nil
}

// Snapshot is the read-only view of iss that hooks get, without the watch
// state (a transition adds it from its issues.Tx).
func (e *Engine) Snapshot(iss *issues.Issue) *hooks.Issue {
	h := &hooks.Issue{
		ID: iss.ID, Slug: iss.Slug, Title: iss.Title, Flow: iss.Flow, Stage: iss.Stage,
		Branch: iss.Branch, PRNumber: iss.PRNumber, PRURL: iss.PRURL, HeadSHA: iss.HeadSHA,
		Labels: iss.Labels, Vars: iss.Vars, Outputs: iss.Outputs,
		Dir: e.Store.Dir(iss.ID), WorkDir: e.WorkDir, DefaultBranch: e.Config.DefaultBranch,
	}
	for _, x := range iss.History {
		h.History = append(h.History, hooks.Event{From: x.From, To: x.To, Kind: x.Kind, Actor: x.Actor, Reason: x.Reason, At: x.At})
	}
	return h
}

// instructionVars are the placeholders of instructions files: a message's,
// and the issue's directory and the repository's default branch, so that
// a file can name `{{issue_dir}}/review.md` and `origin/{{default_branch}}`
// rightly from any worktree.
func (e *Engine) instructionVars(iss *issues.Issue) map[string]string {
	v := e.Snapshot(iss).MessageVars()
	v["issue_dir"] = e.Store.Dir(iss.ID)
	v["default_branch"] = e.Config.DefaultBranch
	return v
}

// Instructions are what whoever acts at iss's stage n does there
// (notice.Book.Instructions).
func (e *Engine) Instructions(n *stages.Node, iss *issues.Issue) string {
	return e.notices.Instructions(n, iss)
}
