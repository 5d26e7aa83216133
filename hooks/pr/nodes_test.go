package pr

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/forge/local"
	"github.com/agenttree/agenttree/hooks"
	"github.com/agenttree/agenttree/internal/gittest"
	"github.com/agenttree/agenttree/internal/gitx"
)

// With state.nodes the agent's commits are on its node (l.work) and the
// controller runs on another host (l.other), whose clone has no issue
// branch: push_branch on the node puts them on origin, and the
// controller's create_pr opens the PR from them there. Later commits
// pushed the same way reach the PR; without them on origin, create_pr
// says what to run.
func TestWithNodesThePRIsOpenedFromWhatTheNodePushed(t *testing.T) {
	l := newLocalPR(t, "")
	cfg := prConfig()
	cfg.State.Nodes.On = true
	l.env.Config = cfg
	root := filepath.Dir(l.bare)
	f, err := local.New(context.Background(), local.Options{StateDir: filepath.Join(root, "controller-state"), RepoDir: l.other, DefaultBranch: "main"})
	require.NoError(t, err)
	ctl := &hooks.Env{Forge: f, Config: cfg, Now: newTestClock().Now, Git: func(dir string) *gitx.Repo { return &gitx.Repo{Dir: dir} }}
	issue := func() *hooks.Issue {
		i := *l.issue
		i.WorkDir, i.Watch, i.Outputs = l.other, map[string]string{}, map[string]string{}
		return &i
	}

	o := runHook(t, ctl, issue(), "create_pr", nil)
	require.Equal(t, hooks.KindFail, o.Kind, "nothing pushed yet")
	assert.Contains(t, o.Reason, "issue-7 is not on origin as the agent's node pushes it (push_branch in the agent's stage)")

	o = runHook(t, &hooks.Env{Config: cfg, Git: ctl.Git}, l.issue, "push_branch", nil)
	require.Equal(t, hooks.KindPass, o.Kind, o.Reason)
	assert.Equal(t, "pushed issue-7 to origin", o.Message)
	head := revParse(t, l.work, "HEAD")
	assert.Equal(t, head, branchIn(t, l.bare, "issue-7"))

	o = runHook(t, ctl, issue(), "create_pr", nil)
	require.Equal(t, hooks.KindPass, o.Kind, o.Reason)
	assert.Equal(t, head, o.Outputs["head_sha"], "the PR holds the node's commit")

	// A fix after a step back: pushed by the node, taken by the
	// controller's create_pr into the open PR.
	gittest.Commit(t, l.work, "fix.txt", "fix\n", "issue 7: fix")
	o = runHook(t, &hooks.Env{Config: cfg, Git: ctl.Git}, l.issue, "push_branch", nil)
	require.Equal(t, hooks.KindPass, o.Kind, o.Reason)
	fixed := revParse(t, l.work, "HEAD")
	in := issue()
	in.PRNumber = 1
	o = runHook(t, ctl, in, "create_pr", nil)
	require.Equal(t, hooks.KindPass, o.Kind, o.Reason)
	assert.Equal(t, fixed, branchIn(t, l.other, "issue-7"))
	pr, err := f.PR(context.Background(), 1)
	require.NoError(t, err)
	assert.Equal(t, fixed, pr.HeadSHA)
}

// push_branch never overwrites: a branch rewritten after its push is
// refused, the remote's commits kept.
func TestPushBranchNeverOverwrites(t *testing.T) {
	l := newLocalPR(t, "")
	o := runHook(t, l.env, l.issue, "push_branch", nil)
	require.Equal(t, hooks.KindPass, o.Kind, o.Reason)
	pushed := revParse(t, l.work, "HEAD")
	gittest.Run(t, l.work, "commit", "--quiet", "--amend", "-m", "issue 7: reworded")
	o = runHook(t, l.env, l.issue, "push_branch", nil)
	require.Equal(t, hooks.KindFail, o.Kind)
	assert.Contains(t, o.Reason, "push rejected")
	assert.Equal(t, pushed, branchIn(t, l.bare, "issue-7"))
}

// With state.nodes, create_pr in an agent's stage runs where the agent
// works, its branch checked out there and ahead of the remote: it is
// pushed from there, nothing taken from the remote over it.
func TestWithNodesCreatePRWhereTheAgentWorks(t *testing.T) {
	l := newLocalPR(t, "")
	cfg := prConfig()
	cfg.State.Nodes.On = true
	l.env.Config = cfg
	gittest.Run(t, l.work, "push", "--quiet", "origin", "issue-7")
	gittest.Commit(t, l.work, "more.txt", "more\n", "issue 7: more")
	head := revParse(t, l.work, "HEAD")
	o := runHook(t, l.env, l.issue, "create_pr", nil)
	require.Equal(t, hooks.KindPass, o.Kind, o.Reason)
	assert.Equal(t, head, o.Outputs["head_sha"])
	assert.Equal(t, head, branchIn(t, l.bare, "issue-7"))
	assert.Equal(t, head, revParse(t, l.work, "HEAD"), "the work tree's branch is not moved")
}
