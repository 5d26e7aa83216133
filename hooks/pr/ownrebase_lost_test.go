package pr

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/hooks"
	"github.com/agenttree/agenttree/internal/gittest"
)

// The commonest rebase, each of the agent's commits replayed with the
// same patch, whose record a kill lost: the PR's head holds every change
// of the branch, and create_pr records the rebase and tells the agent to
// pull, as check_conflicts would have; the agent's next commit on the
// rebase is pushed, not taken for someone else's.
func TestAPlainOwnRebaseWhoseRecordAKillLostIsToldAgain(t *testing.T) {
	l := newLocalPR(t, "")
	l.openPR(t)
	before := l.issue.HeadSHA
	l.pushToMain(t, "g.txt", "other work\n")
	gittest.Run(t, l.work, "checkout", "--quiet", "main")
	o := runHook(t, l.env, l.issue, "check_conflicts", map[string]any{"auto_rebase": true})
	require.Equal(t, hooks.KindPending, o.Kind, o.Reason)
	head := branchIn(t, l.bare, "issue-7")
	// The kill: o.Outputs are never recorded, o.Send never queued.
	o = runHook(t, l.env, l.issue, "create_pr", nil)
	require.Equal(t, hooks.KindPass, o.Kind, o.Reason)
	assert.Equal(t, before, o.Outputs["rebased_from"], "the rebase recorded")
	assert.Equal(t, head, o.Outputs["rebased_to"])
	assert.Len(t, o.Send, 1, "the agent told to pull")
}
