package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/internal/testpipeline"
)

// An agent edits its issue.yaml to skip its gates (a later stage, an
// entry_pending): every command refuses the issue, exit 3, saying what
// changed and what to do, and changes nothing; verify shows it; only a
// person repairs it, and then it works again.
func TestHandEditedIssueIsRefusedVerifiedAndRepaired(t *testing.T) {
	w := newWorkspace(t, testpipeline.Read(t, "cli"))
	id := w.create(t, "Add login page", "--stage", "implement.code")
	path := filepath.Join(w.hostDir(id), "issue.yaml")
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	edited := strings.Replace(string(data), "stage: implement.code", "stage: implementation_review", 1) +
		"entry_pending:\n  stage: implementation_review\n"
	require.NoError(t, os.WriteFile(path, []byte(edited), 0o644))
	events, err := os.ReadFile(filepath.Join(w.hostDir(id), "events.jsonl"))
	require.NoError(t, err)

	for _, tt := range []struct {
		env  map[string]string
		args []string
	}{
		{agentEnv, []string{"next", "-i", itoa(id)}},
		{humanEnv, []string{"next", "-i", itoa(id)}},
		{humanEnv, []string{"approve", itoa(id)}},
		{humanEnv, []string{"move", itoa(id), "accepted", "--reason", "done"}},
	} {
		t.Run(strings.Join(tt.args[:1], " "), func(t *testing.T) {
			r := w.run(t, tt.env, tt.args...)
			assert.Equal(t, exitWaiting, r.code, "stdout %s\nstderr %s", r.stdout, r.stderr)
			for _, want := range []string{"issue 1 was changed outside agenttree", "stage: implement.code → implementation_review",
				"entry_pending added", "agenttree verify 1", "agenttree repair 1"} {
				assert.Contains(t, r.stderr+r.stdout, want)
			}
			got, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.Equal(t, edited, string(got), "the issue's state is unchanged")
			gotEvents, err := os.ReadFile(filepath.Join(w.hostDir(id), "events.jsonl"))
			require.NoError(t, err)
			assert.Equal(t, string(events), string(gotEvents), "nothing was logged")
		})
	}

	r := w.run(t, humanEnv, "verify", itoa(id))
	assert.Equal(t, exitBlocked, r.code, r.stderr)
	assert.Contains(t, r.stdout, "issue 1: CHANGED OUTSIDE AGENTTREE")
	assert.Contains(t, r.stdout, "issue.yaml differs from the last state its log holds (version 1, line 1)")
	assert.Contains(t, r.stdout, "    stage: implement.code → implementation_review")
	assert.Contains(t, r.stdout, "`agenttree repair 1`")

	r = w.run(t, humanEnv, "verify", "--json")
	assert.Equal(t, exitBlocked, r.code, r.stderr)
	var out struct {
		OK     bool `json:"ok"`
		Issues []struct {
			ID      int      `json:"id"`
			OK      bool     `json:"ok"`
			Changes []string `json:"changes"`
		} `json:"issues"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &out), r.stdout)
	assert.False(t, out.OK)
	require.Len(t, out.Issues, 1)
	assert.Equal(t, []string{"stage: implement.code → implementation_review", "entry_pending added"}, out.Issues[0].Changes)

	r = w.run(t, agentEnv, "repair", itoa(id))
	assert.Equal(t, exitWaiting, r.code)
	assert.Contains(t, r.stderr, "repair is for people")

	r = w.run(t, humanEnv, "repair", itoa(id))
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "issue 1: restored the state of version 1, as version 2")
	assert.Contains(t, r.stdout, "undid: stage: implement.code → implementation_review")
	assert.Contains(t, r.stdout, "undid: entry_pending added")
	iss := w.issue(t, id)
	assert.Equal(t, "implement.code", iss.Stage)
	assert.Nil(t, iss.EntryPending)

	r = w.run(t, humanEnv, "verify")
	assert.Equal(t, exitOK, r.code, r.stdout)
	assert.Contains(t, r.stdout, "issue 1: ok (2 events, version 2)")
	r = w.run(t, humanEnv, "repair", itoa(id))
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "nothing to repair")

	r = w.run(t, agentEnv, "next", "-i", itoa(id))
	assert.Equal(t, exitBlocked, r.code, "back to its gates: %s", r.stdout)
}

// A log with nothing to restore from (removed): repair says so and how to
// adopt issue.yaml; adopting starts a new chain.
func TestRepairWithoutALogAdopts(t *testing.T) {
	w := newWorkspace(t, testpipeline.Read(t, "cli"))
	id := w.create(t, "Add login page")
	require.NoError(t, os.Remove(filepath.Join(w.hostDir(id), "events.jsonl")))

	r := w.run(t, humanEnv, "next", "-i", itoa(id))
	assert.Equal(t, exitWaiting, r.code)
	assert.Contains(t, r.stderr, "its events.jsonl is missing")

	r = w.run(t, humanEnv, "repair", itoa(id))
	assert.Equal(t, exitBlocked, r.code)
	assert.Contains(t, r.stderr, "agenttree repair 1 --adopt")
	r = w.run(t, humanEnv, "repair", itoa(id), "--adopt", "--json")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, `"action": "adopted"`)
	r = w.run(t, humanEnv, "verify", itoa(id))
	assert.Equal(t, exitOK, r.code, r.stdout)
	r = w.run(t, humanEnv, "next", "-i", itoa(id))
	assert.Equal(t, exitOK, r.code, r.stderr)
}
