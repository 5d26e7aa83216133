package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/agenttree/agenttree/forge"
	"github.com/agenttree/agenttree/hooks"
	"github.com/agenttree/agenttree/stages"
)

// Status is how a command left an issue.
type Status string

const (
	StatusAdvanced Status = "advanced"
	StatusBlocked  Status = "blocked"
	StatusWaiting  Status = "waiting"
	StatusFinal    Status = "final"
)

// ExitCode is the process exit status for a result: 0 moved or final,
// 1 blocked by a gate or moved with entry hooks unfinished, 3 waiting on a
// human or the controller.
func (r *Result) ExitCode() int {
	if len(r.Unfinished) > 0 && r.Status != StatusWaiting {
		return 1
	}
	return r.Status.ExitCode()
}

// ExitCode is the exit status of a status alone (see Result.ExitCode).
func (s Status) ExitCode() int {
	switch s {
	case StatusBlocked:
		return 1
	case StatusWaiting:
		return 3
	}
	return 0
}

// Result reports one transition attempt.
type Result struct {
	Issue    int      `json:"issue"`
	From     string   `json:"from"`
	To       string   `json:"to"`
	Status   Status   `json:"status"`
	Kind     string   `json:"kind,omitempty"`
	Reasons  []string `json:"reasons"`
	Warnings []string `json:"warnings,omitempty"`
	// Notes are what hooks had to say (a PR opened, a branch rebased),
	// for the agent's eyes.
	Notes   []string `json:"notes,omitempty"`
	Skipped []string `json:"skipped,omitempty"`
	DryRun  bool     `json:"dry_run,omitempty"`
	// Unfinished lists entry hooks of the new stage that did not pass (a
	// merge refused, a push that failed): the move stands, and the next
	// `next` at that stage runs them again.
	Unfinished []string `json:"unfinished,omitempty"`
	// Conflict is set when another process changed the issue first.
	Conflict     bool   `json:"conflict,omitempty"`
	Version      int    `json:"version"`
	Instructions string `json:"instructions,omitempty"`
}

// ErrNotReview is returned when approve is used outside a human review.
var ErrNotReview = errors.New("not at a human review stage")

// Engine moves issues through the pipeline of one config.
type Engine struct {
	Config *stages.Config
	Store  *Store
	Hooks  *hooks.Registry
	Log    *slog.Logger
	// WorkDir is the git work tree hooks run in (the repository root).
	WorkDir string
	// Forge is where PRs live; nil when the config's hooks need none.
	Forge forge.Forge
	// Git opens git in a work tree, for the PR hooks.
	Git func(dir string) hooks.Git
	// maxChain bounds redirects triggered by entry and completion hooks,
	// so a misconfigured loop cannot spin forever.
	maxChain int
}

// New returns an engine over cfg and store.
func New(cfg *stages.Config, store *Store, reg *hooks.Registry, log *slog.Logger) *Engine {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Engine{Config: cfg, Store: store, Hooks: reg, Log: log, WorkDir: filepath.Dir(cfg.File), maxChain: 8}
}

// hookEnv is what hooks see of the world.
func (e *Engine) hookEnv(dryRun bool) *hooks.Env {
	return &hooks.Env{Forge: e.Forge, Git: e.Git, Config: e.Config, Remote: "origin", Log: e.Log, DryRun: dryRun}
}

// Machine returns the stage machine of a flow.
func (e *Engine) Machine(flow *stages.Flow) *Machine {
	return NewMachine(e.Config, flow, e.Hooks)
}

func (e *Engine) locate(iss *Issue) (*stages.Flow, *stages.Node, error) {
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
// state (a transition adds it from its Tx).
func (e *Engine) Snapshot(iss *Issue) *hooks.Issue {
	h := &hooks.Issue{
		ID: iss.ID, Slug: iss.Slug, Title: iss.Title, Flow: iss.Flow, Stage: iss.Stage,
		Branch: iss.Branch, PRNumber: iss.PRNumber, PRURL: iss.PRURL, HeadSHA: iss.HeadSHA,
		Labels: iss.Labels, Vars: iss.Vars, Outputs: iss.Outputs,
		Dir: e.Store.Dir(iss.ID), WorkDir: e.WorkDir, DefaultBranch: e.Config.DefaultBranch,
	}
	for _, x := range iss.History {
		h.History = append(h.History, hooks.Event{From: x.From, To: x.To, Kind: x.Kind, Actor: string(x.Actor), Reason: x.Reason, At: x.At})
	}
	return h
}

// Next moves issue id to the next stage of its flow if the gates pass.
func (e *Engine) Next(ctx context.Context, id int, actor Actor, dryRun bool) (*Result, error) {
	return e.forward(ctx, id, actor, dryRun, false)
}

// Approve moves issue id out of a human review. Only a person may approve.
func (e *Engine) Approve(ctx context.Context, id int, actor Actor, dryRun bool) (*Result, error) {
	return e.forward(ctx, id, actor, dryRun, true)
}

// forward is next and approve: it checks who may act, then runs one
// transition under the issue's lock (DESIGN §4: lock, re-read, compare the
// version, gate, commit, complete, enter).
func (e *Engine) forward(ctx context.Context, id int, actor Actor, dryRun, approve bool) (*Result, error) {
	seen, err := e.Store.Get(id)
	if err != nil {
		return nil, err
	}
	flow, node, err := e.locate(seen)
	if err != nil {
		return nil, err
	}
	res := &Result{Issue: id, From: seen.Stage, To: seen.Stage, Version: seen.Version, Reasons: []string{}, DryRun: dryRun}
	if approve {
		if actor.Kind != ActorHuman {
			res.Status = StatusWaiting
			res.Reasons = append(res.Reasons, fmt.Sprintf("only a person can approve; %s cannot (ask a person to run `agenttree approve %d`)", actor, id))
			return res, nil
		}
		if !node.HumanReview() && !entryPendingAt(seen, node) {
			return nil, fmt.Errorf("issue %d is at %s: %w; use `agenttree next -i %d`", id, node.Path, ErrNotReview, id)
		}
	}
	if why := waitReason(actor, node, id); why != "" && node.Terminal() == "" {
		res.Status = StatusWaiting
		res.Reasons = append(res.Reasons, why)
		return res, nil
	}

	tx, err := e.Store.Lock(ctx, id)
	if err != nil {
		return nil, err
	}
	defer tx.Unlock()
	iss, err := tx.Get()
	if err != nil {
		return nil, err
	}
	t := &transition{e: e, ctx: ctx, tx: tx, actor: actor, res: res, flow: flow, m: e.Machine(flow)}
	if iss.Version != seen.Version {
		t.conflict(&ConflictError{ID: id, Expected: seen.Version, Found: iss.Version})
		return res, nil
	}

	if approve && !node.HumanReview() {
		// A person approves again what changed after the review (the merge
		// on entering this stage refused unapproved commits).
		if iss, err = t.reapprove(iss, node); err != nil {
			return nil, err
		}
	}

	// Entry hooks that did not finish when the issue arrived (a push that
	// failed, a merge refused) run again before anything else, terminal
	// stages included.
	if failures, ran := t.resumeEntry(iss, node); len(failures) > 0 {
		res.Status = StatusBlocked
		res.Reasons = append(res.Reasons, failures...)
		res.Unfinished = nil
		return res, nil
	} else if ran {
		if iss, err = tx.Get(); err != nil {
			return nil, err
		}
		res.Version = iss.Version
		if iss.Stage != node.Path {
			// The entry hooks sent the issue elsewhere: that is this
			// command's move; the new stage's gate waits for the next one.
			res.Status = StatusAdvanced
			return res, nil
		}
	}
	if term := node.Terminal(); term != "" {
		res.Status = StatusFinal
		res.Reasons = append(res.Reasons, fmt.Sprintf("issue %d is done: %s is a terminal (%s) stage", id, node.Path, term))
		return res, nil
	}
	to, skipped, err := flow.Next(node.Path, e.Snapshot(iss).CondVars())
	if err != nil {
		return nil, err
	}
	res.Skipped = skipped
	if to == nil {
		res.Status = StatusFinal
		res.Reasons = append(res.Reasons, fmt.Sprintf("issue %d is at %s, the last stage of flow %q", id, node.Path, flow.Name))
		return res, nil
	}
	kind := KindAdvance
	if node.HumanReview() {
		kind = KindApprove
		t.approvePR(iss)
	}
	t.advance(iss, node, to, kind)
	res.Reasons = dedupe(res.Reasons)
	return res, nil
}

func entryPendingAt(iss *Issue, node *stages.Node) bool {
	return iss.EntryPending != nil && iss.EntryPending.Stage == node.Path
}

func dedupe(list []string) []string {
	seen := make(map[string]bool, len(list))
	out := list[:0]
	for _, s := range list {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// instructions returns the stage's skill file, or a one-line summary.
func (e *Engine) instructions(n *stages.Node, iss *Issue) string {
	if skill := n.Skill(); skill != "" {
		p := skill
		if !filepath.IsAbs(p) {
			p = filepath.Join(filepath.Dir(e.Config.File), p)
		}
		if data, err := os.ReadFile(p); err == nil {
			return strings.TrimRight(string(data), "\n")
		}
	}
	switch {
	case n.HumanReview():
		return fmt.Sprintf("%s waits for a person: review issue %d, then `agenttree approve %d`.", n.Path, iss.ID, iss.ID)
	case n.Terminal() != "":
		return fmt.Sprintf("%s is the end of the flow.", n.Path)
	}
	return fmt.Sprintf("Work on %s on branch %s (issue documents in %s), then run `agenttree next`.", n.Path, iss.Branch, e.Store.Dir(iss.ID))
}
