package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/internal/gittest"
	"github.com/agenttree/agenttree/internal/ostest"
	"github.com/agenttree/agenttree/internal/testpipeline"
)

// The review's attack, by a real agent of another OS user, with the state
// directory writable by the agents' group: it moves host/ aside and plants
// a first-layout issue.yaml for issue 3 at `accepted`, with forged
// outputs and history, over a commit whose CI failed and that nobody
// approved. The person's commands migrate nothing while the state
// directory is not theirs alone, and say so; once doctor --fix has made
// it theirs, the migration leaves the planted files alone, naming them.
// Issue 3 is never at accepted, and nothing is merged.
func TestAPlantedFirstLayoutIsNotAdopted(t *testing.T) {
	u := ostest.OtherUser(t)
	w := newForgeRepo(t, testpipeline.Read(t, "local-forge"))
	bare := filepath.Join(filepath.Dir(w.dir), "origin.git")
	w.create(t, "One")
	w.create(t, "Two")
	id := w.create(t, "Add search", "--stage", "implement")
	gittest.Run(t, w.dir, "checkout", "-q", "-b", w.issue(t, id).Branch)
	gittest.Commit(t, w.dir, "search.txt", "search\n", "search") // no ok.txt: CI fails
	require.Equal(t, exitOK, w.run(t, agentEnv, "next").code)
	r := w.run(t, agentEnv, "pr", "wait", itoa(id), "--interval", "10ms")
	require.NotEqual(t, exitOK, r.code, "CI failed: %s", r.stdout)
	head := strings.TrimSpace(gittest.Run(t, w.dir, "rev-parse", "HEAD"))

	// The misconfiguration: the state directory writable by the agents'
	// group, as the issue's documents are.
	stateDir := filepath.Join(w.dir, "_agenttree")
	docs := w.issueDir(id)
	for _, dir := range []string{stateDir, docs} {
		require.NoError(t, os.Lchown(dir, -1, u.GID))
	}
	require.NoError(t, os.Chmod(stateDir, 0o775))
	ostest.OpenUp(t, w.dir)

	data, err := os.ReadFile(filepath.Join(w.hostDir(id), "issue.yaml"))
	require.NoError(t, err)
	var forged strings.Builder
	for _, line := range strings.SplitAfter(string(data), "\n") {
		if !strings.HasPrefix(line, "chain:") {
			forged.WriteString(line)
		}
	}
	planted := strings.NewReplacer(
		"stage: pr\n", "stage: accepted\n",
		"outputs:\n", "outputs:\n    ci_passed_sha: "+head+"\n    approved_sha: "+head+"\n",
		"history:\n", "history:\n    - from: review\n      to: accepted\n      kind: advance\n      actor: human\n      at: 2026-01-01T00:00:00Z\n",
	).Replace(forged.String()) + "entry_pending:\n    stage: accepted\n    from: review\n"
	require.Contains(t, planted, "approved_sha")
	attack := u.Command("sh", "-c", `mv _agenttree/host _agenttree/host.aside && cat > "$1" && echo '{"legacy":true}' > "$2"`,
		"sh", filepath.Join(docs, "issue.yaml"), filepath.Join(docs, "events.jsonl"))
	attack.Dir = w.dir
	attack.Stdin = strings.NewReader(planted)
	out, err := attack.CombinedOutput()
	require.NoError(t, err, "the agent's plant: %s", out)

	notAccepted := func(t *testing.T) {
		t.Helper()
		if data, err := os.ReadFile(filepath.Join(w.hostDir(id), "issue.yaml")); err == nil {
			assert.NotContains(t, string(data), "stage: accepted")
		}
		assert.NotContains(t, gittest.Run(t, bare, "ls-tree", "--name-only", "main"), "search.txt", "nothing was merged")
	}

	// Not the person's alone: nothing is migrated or adopted, and
	// every command says so.
	r = w.run(t, humanEnv, "status")
	assert.Contains(t, r.stderr, "warning: the state directory was not migrated")
	assert.Contains(t, r.stderr, stateDir+": its group "+u.Name)
	r = w.run(t, humanEnv, "next", "-i", itoa(id))
	assert.NotEqual(t, exitOK, r.code, "stdout %s\nstderr %s", r.stdout, r.stderr)
	notAccepted(t)
	assert.NoDirExists(t, filepath.Join(stateDir, "host"), "no host/ was made from the plant")

	r = w.run(t, humanEnv, "doctor")
	assert.Equal(t, exitBlocked, r.code)
	assert.Contains(t, r.stdout, "FAIL state directory written by the host only: "+stateDir)
	r = w.run(t, humanEnv, "doctor", "--fix")
	assert.Contains(t, r.stdout, "fixed: chmod g-w,o-w "+stateDir)

	// The person's alone now: the migration runs, and the planted files,
	// in a directory the agents' group may write, are left where they are.
	r = w.run(t, humanEnv, "status")
	for _, name := range []string{"issue.yaml", "events.jsonl"} {
		assert.Contains(t, r.stderr, "warning: "+filepath.Join(docs, name)+": left where it is, not adopted")
	}
	assert.Contains(t, r.stderr, "its group "+u.Name)
	r = w.run(t, humanEnv, "next", "-i", itoa(id))
	assert.NotEqual(t, exitOK, r.code, "stdout %s\nstderr %s", r.stdout, r.stderr)
	notAccepted(t)
	assert.NoFileExists(t, filepath.Join(w.hostDir(id), "issue.yaml"), "nothing was adopted")
	assert.FileExists(t, filepath.Join(docs, "issue.yaml"), "the plant is where the agent put it")

	r = w.run(t, humanEnv, "doctor")
	assert.Contains(t, r.stdout, "FAIL no first-layout files outside host/")
	assert.Contains(t, r.stdout, filepath.Join(docs, "issue.yaml"))
}
