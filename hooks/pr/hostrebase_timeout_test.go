package pr

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/controller/polling"
	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/hooks"
	"github.com/agenttree/agenttree/internal/gittest"
	"github.com/agenttree/agenttree/internal/gitx"
)

// A rebase on the host that runs out of git's time (a checkout of a big
// tree, a long branch) is waited out as the forge's trouble, and so
// counts towards the escalation that calls a person after a few polls in
// a row (polling.ForgeTrouble), rather than a wait that never ends.
func TestAHostRebaseThatTimesOutCountsTowardsAnEscalation(t *testing.T) {
	l := newLocalPR(t, "")
	l.openPR(t)
	l.pushToMain(t, "g.txt", "other work\n")
	gittest.Run(t, l.work, "checkout", "--quiet", "main")
	// Make the temporary worktree's checkout slow (stands in for a big
	// tree or a long branch: git's per-command time limit is 2 min).
	hooksDir := filepath.Join(t.TempDir(), "hooks")
	require.NoError(t, os.MkdirAll(hooksDir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(hooksDir, "post-checkout"), []byte("#!/bin/sh\nsleep 3\n"), 0o755))
	gittest.Run(t, l.work, "config", "core.hooksPath", hooksDir)
	l.env.Git = func(dir string) *gitx.Repo { return &gitx.Repo{Dir: dir, Timeout: time.Second} }

	for i := 0; i < polling.MaxForgeErrors+2; i++ {
		o := runHook(t, l.env, l.issue, "check_conflicts", map[string]any{"auto_rebase": true})
		require.Equal(t, hooks.KindPending, o.Kind, o.Reason)
		require.True(t, polling.ForgeTrouble(&engine.Outcome{Class: o.Class}), "poll %d: class %q: a wait that never ends must count towards an escalation", i+1, o.Class)
	}
}
