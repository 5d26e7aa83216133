package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/cmd/agenttree/configcmd"
	"github.com/agenttree/agenttree/stages"
)

// The design notes' Option A, as written: validate says where its bare
// step_backs go, the nearest earlier stage where an agent works, and
// warns of none of them.
func TestValidateSaysWhereABareStepBackGoes(t *testing.T) {
	config, err := os.ReadFile(filepath.Join("..", "..", "stages", "load", "testdata", "designnotes", "option-a.yaml"))
	require.NoError(t, err)
	w := newWorkspace(t, string(config))

	r := w.run(t, humanEnv, "validate")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, []string{
		w.config + ": ok (canonical form, 5 stages, flows: default, 2 warnings)",
		w.config + ":26:23: note: `wait_for_ci` on_failure: step_back at pr_ready steps back to implement.feedback, the nearest earlier stage where an agent works",
		w.config + ":28:24: note: `check_conflicts` on_conflict: step_back at pr_ready steps back to implement.feedback, the nearest earlier stage where an agent works",
	}, strings.Split(strings.TrimSpace(r.stdout), "\n"))
	assert.NotContains(t, r.stderr, "`wait_for_ci`", "no warning of a step back with nowhere to go")
	assert.NotContains(t, r.stderr, "has no stage to step back to", "no warning of a step back with nowhere to go")
	assert.Contains(t, r.stderr, "failures of `check_conflicts` in pr_ready other than a conflict", "its conflicts have a way out, its other failures not")
	assert.NotContains(t, r.stderr, "`check_conflicts` in pr_ready lead nowhere", "beside the note of where its on_conflict goes")

	r = w.run(t, humanEnv, "validate", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	var rep configcmd.ValidateReport
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &rep), r.stdout)
	require.Len(t, rep.StepBacks, 2)
	assert.Equal(t, stages.StepBackRoute{Flow: "default", Node: "pr_ready", Hook: "wait_for_ci", Policy: "on_failure", To: "implement.feedback",
		Pos: stages.Pos{File: w.config, Line: 26, Col: 23}}, rep.StepBacks[0])
}
