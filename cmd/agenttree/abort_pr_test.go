package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"
)

// A person's abort of an issue whose PR is open closes the PR: the
// starter's and the examples' abandon stage runs close_pr, and an issue
// dropped before it had a PR has nothing to close.
func TestAbortClosesThePR(t *testing.T) {
	r := newRig(t, "controller")
	ctl := r.startController(t)
	id := r.startIssue(t)
	r.waitFor(t, id, "stepped back once", steppedBack(1))
	require.Equal(t, 1, r.prs(t), "the PR is open")

	res := r.run(t, humanEnv, "abort", itoa(id), "--reason", "not needed")
	require.Equal(t, exitOK, res.code, "stdout %s stderr %s", res.stdout, res.stderr)
	stopController(t, ctl)
	var pr struct{ State string }
	data, err := os.ReadFile(filepath.Join(r.forgeDir(), "prs", "1.yaml"))
	require.NoError(t, err)
	require.NoError(t, yaml.Unmarshal(data, &pr))
	assert.Equal(t, "closed", pr.State)

	early := r.create(t, "Dropped early", "--stage", "implement.code")
	res = r.run(t, humanEnv, "abort", itoa(early), "--reason", "not needed")
	assert.Equal(t, exitOK, res.code, "nothing to close: stdout %s stderr %s", res.stdout, res.stderr)
	assert.Equal(t, "not_doing", r.issue(t, early).Stage)
}
