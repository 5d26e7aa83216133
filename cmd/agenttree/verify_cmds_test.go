package main

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/internal/gittest"
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

// The review's attack, as an agent of the same user: the markers of a
// store with chains removed, the issue and its PR record made to look
// like ones from before chains (no chain, no log), with the stage, an
// entry_pending and an approval written by hand. Nothing adopts them:
// `next` refuses the issue and merges nothing, verify shows it; once a
// person has put issue.yaml right and adopted it, the PR record is still
// refused, saying what to do.
func TestStateFromBeforeChainsCannotBeFaked(t *testing.T) {
	w := newForgeRepo(t, testpipeline.Read(t, "local-forge"))
	bare := filepath.Join(filepath.Dir(w.dir), "origin.git")
	id := w.create(t, "Add search", "--stage", "implement")
	gittest.Run(t, w.dir, "checkout", "-q", "-b", w.issue(t, id).Branch)
	gittest.Commit(t, w.dir, "ok.txt", "ok\n", "search")
	require.Equal(t, exitOK, w.run(t, agentEnv, "next").code)
	require.Equal(t, exitOK, w.run(t, agentEnv, "pr", "wait", itoa(id), "--interval", "10ms").code)
	require.Equal(t, exitOK, w.run(t, agentEnv, "next").code)
	require.Equal(t, "review", w.issue(t, id).Stage)
	head := strings.TrimSpace(gittest.Run(t, w.dir, "rev-parse", "HEAD"))

	host := filepath.Join(w.dir, "_agenttree", "host")
	prs := filepath.Join(host, "forge", "prs")
	for _, p := range []string{filepath.Join(prs, ".chained"), filepath.Join(prs, "1.chain.jsonl"),
		filepath.Join(host, "issues", ".chained"), filepath.Join(host, "layout")} {
		require.NoError(t, os.RemoveAll(p))
	}
	appendFile(t, filepath.Join(prs, "1.yaml"), "approvals:\n    - by: alice\n      sha: "+head+"\n      at: 2026-11-23T16:58:00Z\n")
	issueYAML := filepath.Join(w.hostDir(id), "issue.yaml")
	data, err := os.ReadFile(issueYAML)
	require.NoError(t, err)
	var good strings.Builder // as sed -e '/^chain:/d'
	for _, line := range strings.SplitAfter(string(data), "\n") {
		if !strings.HasPrefix(line, "chain:") {
			good.WriteString(line)
		}
	}
	forged := strings.Replace(good.String(), "stage: review", "stage: accepted", 1) + "entry_pending:\n    stage: accepted\n    from: review\n"
	require.NoError(t, os.WriteFile(issueYAML, []byte(forged), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(w.hostDir(id), "events.jsonl"), []byte(`{"legacy":true}`+"\n"), 0o644))

	r := w.run(t, agentEnv, "next")
	assert.Equal(t, exitWaiting, r.code, "stdout %s\nstderr %s", r.stdout, r.stderr)
	assert.Contains(t, r.stderr, "issue 1 was changed outside agenttree")
	assert.Contains(t, r.stderr, "as if it came from before chains")
	assert.NotContains(t, r.stdout, "merged PR")
	r = w.run(t, humanEnv, "verify", itoa(id))
	assert.Equal(t, exitBlocked, r.code, r.stdout)
	assert.Contains(t, r.stdout, "issue 1: CHANGED OUTSIDE AGENTTREE")
	assert.Contains(t, r.stdout, "as if it came from before chains")
	r = w.run(t, humanEnv, "repair", itoa(id))
	assert.Equal(t, exitBlocked, r.code)
	assert.Contains(t, r.stderr, "agenttree repair 1 --adopt")

	// A person puts issue.yaml back as it was and adopts it.
	require.NoError(t, os.WriteFile(issueYAML, []byte(good.String()), 0o644))
	r = w.run(t, humanEnv, "repair", itoa(id), "--adopt")
	require.Equal(t, exitOK, r.code, r.stderr)
	r = w.run(t, humanEnv, "next", "-i", itoa(id))
	assert.NotEqual(t, exitOK, r.code, "stdout %s\nstderr %s", r.stdout, r.stderr)
	assert.Contains(t, r.stdout+r.stderr, "local PR #1: its record was changed outside agenttree")
	assert.Contains(t, r.stdout+r.stderr, "removes the record")
	assert.Equal(t, "review", w.issue(t, id).Stage)
	assert.NotContains(t, gittest.Run(t, bare, "ls-tree", "--name-only", "main"), "ok.txt", "nothing was merged")
}

func appendFile(t *testing.T, path, text string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString(text)
	require.NoError(t, errors.Join(err, f.Close()))
}
