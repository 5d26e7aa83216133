package main

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/internal/gittest"
	"github.com/agenttree/agenttree/internal/testpipeline"
)

// pr wait takes the issue's PR where its id would do (--pr N, or the
// PR's URL); a number alone stays an issue id; --json says how many
// polls it made and how long it waited.
func TestPRWaitByPRNumberOrURL(t *testing.T) {
	w := newForgeRepo(t, testpipeline.Read(t, "local-forge"))
	first := w.create(t, "No PR", "--stage", "implement")
	id := w.create(t, "Add checkout page", "--stage", "implement")
	require.Equal(t, []int{1, 2}, []int{first, id}, "PR #1 is to be issue 2's")
	gittest.Run(t, w.dir, "checkout", "-q", "-b", w.issue(t, id).Branch)
	gittest.Commit(t, w.dir, "ok.txt", "ok\n", "ci file")
	require.Equal(t, 0, w.run(t, agentEnv, "next", "-i", itoa(id)).code)
	iss := w.issue(t, id)
	require.Equal(t, 1, iss.PRNumber)

	r := w.run(t, humanEnv, "pr", "wait", "--pr", "1", "--interval", "10ms", "--json")
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	var out struct {
		Passed     bool   `json:"passed"`
		Iterations int    `json:"iterations"`
		ElapsedS   *int64 `json:"elapsed_s"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &out), r.stdout)
	assert.True(t, out.Passed)
	assert.GreaterOrEqual(t, out.Iterations, 1, r.stdout)
	require.NotNil(t, out.ElapsedS, "elapsed_s is there: %s", r.stdout)

	r = w.run(t, humanEnv, "pr", "wait", iss.PRURL, "--interval", "10ms")
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	assert.Contains(t, r.stdout, "CI passed")

	r = w.run(t, humanEnv, "pr", "wait", "1")
	assert.Equal(t, 2, r.code, "1 alone is issue 1, which has no PR: %s", r.stdout)
	assert.Contains(t, r.stderr, "no pull request yet")

	r = w.run(t, humanEnv, "pr", "wait", "--pr", "7")
	assert.Equal(t, 2, r.code)
	assert.Contains(t, r.stderr, "no issue here has PR #7")
	r = w.run(t, humanEnv, "pr", "wait", "2", "--pr", "1")
	assert.Equal(t, 2, r.code)
	assert.Contains(t, r.stderr, "not both")
}
