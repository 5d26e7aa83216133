package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/cmd/agenttree/configcmd"
	"github.com/agenttree/agenttree/examples"
	"github.com/agenttree/agenttree/internal/gittest"
	"github.com/agenttree/agenttree/internal/testpipeline"
)

// A person's move past the review does not merge what nobody approved:
// the merge is refused, left for a person (not sent to the agent), and a
// person's approval of the head, there, merges it.
func TestAPersonsMovePastTheReviewMergesNothingUnapproved(t *testing.T) {
	w := newForgeRepo(t, testpipeline.Read(t, "local-forge"))
	bare := filepath.Join(filepath.Dir(w.dir), "origin.git")
	id := w.create(t, "Add search", "--stage", "implement")
	gittest.Run(t, w.dir, "checkout", "-q", "-b", w.issue(t, id).Branch)
	head := gittest.Commit(t, w.dir, "ok.txt", "ok\n", "search")
	require.Equal(t, 0, w.run(t, agentEnv, "next").code)
	r := w.run(t, agentEnv, "pr", "wait", itoa(id), "--interval", "10ms")
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	require.Equal(t, 0, w.run(t, agentEnv, "next").code)
	require.Equal(t, "review", w.issue(t, id).Stage)

	r = w.run(t, humanEnv, "move", itoa(id), "accepted", "--reason", "looks done")
	require.Equal(t, 1, r.code, "moved, but not merged: "+r.stdout+r.stderr)
	assert.Contains(t, r.stdout, "PR #1 was not merged at its head "+head[:12]+": no person's approval of it is on record")
	assert.Contains(t, r.stdout, "`agenttree approve "+itoa(id)+"`")
	assert.NotContains(t, gittest.Run(t, bare, "ls-tree", "--name-only", "main"), "ok.txt", "nothing unapproved reached main")
	iss := w.issue(t, id)
	assert.Equal(t, "accepted", iss.Stage)
	require.NotNil(t, iss.EntryPending, "the merge is left to do")
	assert.Nil(t, iss.Escalated)

	// The controller's passes try it again and refuse it again.
	r = w.run(t, humanEnv, "next", "-i", itoa(id))
	require.Equal(t, 1, r.code, r.stdout+r.stderr)
	assert.Contains(t, r.stdout, "no person's approval of it is on record")

	r = w.run(t, humanEnv, "approve", itoa(id))
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	assert.Contains(t, r.stdout, "merged PR #1")
	assert.Contains(t, gittest.Run(t, bare, "ls-tree", "--name-only", "main"), "ok.txt")
}

// validate says which flows merge unreviewed: those the config says may
// (the ok line, and --json), and, as a warning with what to write, those
// it does not.
func TestValidateSaysWhichFlowsMergeUnreviewed(t *testing.T) {
	config, err := examples.Config("quick")
	require.NoError(t, err)
	w := newWorkspace(t, string(config))
	r := w.run(t, humanEnv, "validate")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, ": ok (canonical form, 6 stages, flows: default, quick; merged unreviewed: quick at accepted)")
	assert.Empty(t, r.stderr)

	r = w.run(t, humanEnv, "validate", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	var rep configcmd.ValidateReport
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &rep), r.stdout)
	require.Len(t, rep.Unreviewed, 1)
	assert.Equal(t, "quick", rep.Unreviewed[0].Flow)
	assert.Equal(t, "accepted", rep.Unreviewed[0].Node)
	line := 1 + strings.Count(string(config[:strings.Index(string(config), "- merge_pr: {require_review: false}")]), "\n")
	assert.Equal(t, line, rep.Unreviewed[0].Pos.Line)

	// Without saying so, the quick flow's merge is a warning that says what
	// to write, and the ok line says nothing of it.
	unsaid := strings.Replace(string(config), "- merge_pr: {require_review: false}", "- merge_pr:", 1)
	require.NotEqual(t, string(config), unsaid)
	w = newWorkspace(t, unsaid)
	r = w.run(t, humanEnv, "validate")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, ": ok (canonical form, 6 stages, flows: default, quick, 1 warning)")
	assert.Contains(t, r.stderr, fmt.Sprintf("%s:%d:9: warning: `merge_pr` in accepted merges the PRs of flow `quick` with no person's review before it", w.config, line))
	assert.Contains(t, r.stderr, "say so: `merge_pr: {require_review: false}`")
}
