package examples_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/controller"
	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/examples"
	"github.com/agenttree/agenttree/forge/local"
	"github.com/agenttree/agenttree/hooks/builtin"
	"github.com/agenttree/agenttree/internal/gittest"
	"github.com/agenttree/agenttree/internal/gitx"
	"github.com/agenttree/agenttree/sessions/tmux"
	"github.com/agenttree/agenttree/stages"
	"github.com/agenttree/agenttree/stages/load"
)

// Bounds of the waits for the controller: a pass takes well under a second
// here (CI is `make test`); the bound is for a loaded machine and is never
// reached when things work.
const (
	settleWithin = 20 * time.Second
	tickEvery    = 50 * time.Millisecond
)

// rig is a clone of a bare origin holding an example's pipeline, a Makefile
// for its CI, and an engine and controller over it on the local forge.
type rig struct {
	dir, bare string
	e         *engine.Engine
	ctl       *controller.Controller
	// warnings are what loading the example said, as file:line:col text.
	warnings []string
}

func newRig(t *testing.T, example string) *rig {
	t.Helper()
	config, err := examples.Config(example)
	require.NoError(t, err)
	return newRigWith(t, config)
}

// newRigWith is a rig over the pipeline config.
func newRigWith(t *testing.T, config []byte) *rig {
	t.Helper()
	bare, dir := gittest.NewRemote(t)
	gittest.Commit(t, dir, ".gitignore", "/_agenttree/*\n!/_agenttree/skills/\n", "ignore agenttree's state")
	gittest.Commit(t, dir, "Makefile", "test:\n\ttest -f ok.txt\n", "CI wants ok.txt")
	gittest.Commit(t, dir, stages.FileName, string(config), "the pipeline")
	gittest.Run(t, dir, "push", "-q", "origin", "main")

	open := func() (*engine.Engine, error) { return openEngine(t.Context(), filepath.Join(dir, stages.FileName)) }
	e, err := open()
	require.NoError(t, err)
	var warnings []string
	for _, w := range e.Config.Warnings {
		warnings = append(warnings, w.String())
	}
	ctl := &controller.Controller{
		// An engine of its own, as the controller's process has: what it
		// caches of the forge in a pass is its own.
		Load: open,
		// Every pass looks at every issue: the test does not wait out the
		// example's polling intervals.
		Eager: true,
		// No tmux server on this socket: messages to agents stay queued.
		Tmux: &tmux.Client{Socket: filepath.Join(t.TempDir(), "no-tmux"), LockDir: e.Store.Root()},
	}
	return &rig{dir: dir, bare: bare, e: e, ctl: ctl, warnings: warnings}
}

// openEngine opens the engine over the pipeline at path on the local
// forge, as agenttree's commands do.
func openEngine(ctx context.Context, path string) (*engine.Engine, error) {
	reg := builtin.Registry()
	cfg, err := load.File(path, reg)
	if err != nil {
		return nil, err
	}
	stateDir := filepath.Join(filepath.Dir(path), "_agenttree")
	store, err := issues.Open(stateDir)
	if err != nil {
		return nil, err
	}
	f, err := local.New(ctx, local.Options{StateDir: stateDir, RepoDir: filepath.Dir(path), DefaultBranch: cfg.DefaultBranch,
		Project: cfg.Project, CICommand: cfg.CI.Command, CITimeout: cfg.CI.Timeout, CIMaxParallel: cfg.CI.MaxParallel})
	if err != nil {
		return nil, err
	}
	return engine.New(cfg, store, reg, nil, engine.WithForge(f),
		engine.WithGit(func(dir string) *gitx.Repo { return &gitx.Repo{Dir: dir} })), nil
}

// create makes an issue on flow ("" for the default) as a person.
func (r *rig) create(t *testing.T, flow string) int {
	t.Helper()
	iss, err := r.e.Create(context.Background(), engine.NewIssue{Title: "Add checkout page", Flow: flow})
	require.NoError(t, err)
	return iss.ID
}

// next is who's `agenttree next` on issue id: a person at a human review
// approves, as `agenttree approve` does.
func (r *rig) next(t *testing.T, id int, who engine.Actor) *engine.Result {
	t.Helper()
	iss := r.issue(t, id)
	n, ok := r.e.Config.Node(iss.Stage)
	require.True(t, ok, iss.Stage)
	var res *engine.Result
	var err error
	if who.Kind == engine.ActorHuman && n.HumanReview() {
		res, err = r.e.Approve(context.Background(), id, who, false)
	} else {
		res, err = r.e.Next(context.Background(), id, who, false)
	}
	require.NoError(t, err)
	return res
}

// move is who's `next` on issue id, which must take it to stage.
func (r *rig) move(t *testing.T, id int, who engine.Actor, stage string, why ...string) {
	t.Helper()
	res := r.next(t, id, who)
	require.Equal(t, stage, res.To, "%s %+v", strings.Join(why, ""), res)
	require.Contains(t, []engine.Status{engine.StatusAdvanced, engine.StatusFinal}, res.Status, "%+v", res)
	require.Equal(t, stage, r.issue(t, id).Stage)
}

// work is the agent's work on issue id: its branch checked out in the
// clone, and a commit on it; with ok, also the file CI wants.
func (r *rig) work(t *testing.T, id int, ok bool) {
	t.Helper()
	gittest.Run(t, r.dir, "checkout", "-q", "-b", r.issue(t, id).Branch)
	gittest.Commit(t, r.dir, "feature.txt", "checkout page\n", "checkout page")
	if ok {
		r.fixCI(t)
	}
}

// implemented is an issue of the default flow that a person started and
// the developer implemented and reviewed, at implement.feedback with its
// gates passing; with ok, CI will pass.
func (r *rig) implemented(t *testing.T, ok bool) int {
	t.Helper()
	id := r.create(t, "")
	r.move(t, id, person, "implement.code")
	r.work(t, id, ok)
	r.move(t, id, dev, "implement.feedback")
	r.put(t, id, "review.md", noCriticalIssues)
	return id
}

// fixCI commits the file CI wants.
func (r *rig) fixCI(t *testing.T) {
	t.Helper()
	gittest.Commit(t, r.dir, "ok.txt", "ok\n", "make CI pass")
}

// put writes a stage document into issue id's directory.
func (r *rig) put(t *testing.T, id int, name, text string) {
	t.Helper()
	require.NoError(t, os.WriteFile(filepath.Join(r.e.Store.Dir(id), name), []byte(text), 0o644))
}

func (r *rig) issue(t *testing.T, id int) *issues.Issue {
	t.Helper()
	iss, err := r.e.Store.Get(id)
	require.NoError(t, err)
	return iss
}

// settle runs the controller's passes until issue id is at stage with its
// entry work done, and returns it.
func (r *rig) settle(t *testing.T, id int, stage string) *issues.Issue {
	t.Helper()
	var got *issues.Issue
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		_, err := r.ctl.Tick(context.Background())
		require.NoError(c, err)
		iss, err := r.e.Store.Get(id)
		require.NoError(c, err)
		require.Truef(c, iss.Stage == stage && iss.EntryPending == nil, "issue %d is not settled at %s: %s", id, stage, describe(iss))
		got = iss
	}, settleWithin, tickEvery)
	return got
}

// approveOnceGreen is a person approving issue id while the controller
// watches its PR: the approval passes once CI is green.
func (r *rig) approveOnceGreen(t *testing.T, id int) {
	t.Helper()
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		_, err := r.ctl.Tick(context.Background())
		require.NoError(c, err)
		res, err := r.e.Approve(context.Background(), id, person, false)
		require.NoError(c, err)
		require.Equalf(c, engine.StatusAdvanced, res.Status, "%+v", res)
	}, settleWithin, tickEvery)
}

// mainFiles are the files on origin's main.
func (r *rig) mainFiles(t *testing.T) string {
	t.Helper()
	return gittest.Run(t, r.bare, "ls-tree", "--name-only", "main")
}

func describe(iss *issues.Issue) string {
	return fmt.Sprintf("at %s, entry pending %+v, escalated %+v, history %+v", iss.Stage, iss.EntryPending, iss.Escalated, iss.History)
}

// moves counts issue's history entries of kind.
func moves(iss *issues.Issue, kind stages.Move) int {
	n := 0
	for _, h := range iss.History {
		if h.Kind == kind {
			n++
		}
	}
	return n
}

// lastMove is the issue's latest history entry of kind, or a zero one.
func lastMove(iss *issues.Issue, kind stages.Move) issues.HistoryEntry {
	for i := len(iss.History) - 1; i >= 0; i-- {
		if iss.History[i].Kind == kind {
			return iss.History[i]
		}
	}
	return issues.HistoryEntry{}
}
