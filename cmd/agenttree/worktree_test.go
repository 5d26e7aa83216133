package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/internal/gittest"
)

// An agent in a linked worktree works on the main checkout's issues under
// the main checkout's rules, even if its branch edits .agenttree.yaml.
func TestLinkedWorktreeUsesTheMainCheckout(t *testing.T) {
	const gated = `
stages:
  - name: implement
    pre_completion:
      - file_exists: notes.md
  - name: review
    human_review: true
  - name: done
    terminal: completion
`
	w := newForgeRepo(t, gated)
	id := w.create(t, "Login", "--stage", "implement")
	branch := w.issue(t, id).Branch
	wt := filepath.Join(filepath.Dir(w.dir), "wt")
	gittest.Run(t, w.dir, "worktree", "add", "-q", "-b", branch, wt)

	// The branch weakens the gate; it must not matter.
	weak := "stages:\n  - name: implement\n  - name: review\n    human_review: true\n  - name: done\n    terminal: completion\n"
	require.NoError(t, os.WriteFile(filepath.Join(wt, ".agenttree.yaml"), []byte(weak), 0o644))

	t.Chdir(wt)
	r := invoke(t, agentEnv, "next")
	require.Equal(t, 1, r.code, "the main checkout's gate applies: %s%s", r.stdout, r.stderr)
	assert.Contains(t, r.stdout, "notes.md")
	_, err := os.Stat(filepath.Join(wt, "_agenttree"))
	assert.True(t, os.IsNotExist(err), "no second state directory in the worktree")

	w.writeDoc(t, id, "notes.md", "done\n")
	r = invoke(t, agentEnv, "next")
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	assert.Equal(t, "review", w.issue(t, id).Stage)
}

// An agent cannot point the CLI at a laxer config beside the real one.
func TestAgentsUseTheRepositoryConfig(t *testing.T) {
	w := newWorkspace(t, "stages:\n  - name: implement\n    pre_completion:\n      - file_exists: notes.md\n  - name: done\n    terminal: completion\n")
	id := w.create(t, "Login")
	weak := filepath.Join(w.dir, ".weak.yaml")
	require.NoError(t, os.WriteFile(weak, []byte("stages:\n  - name: implement\n  - name: done\n    terminal: completion\n"), 0o644))

	r := invoke(t, agentEnv, "--config", weak, "next", "-i", itoa(id))
	assert.Equal(t, 2, r.code, r.stdout+r.stderr)
	assert.Contains(t, r.stderr, "agents use the repository's .agenttree.yaml")
	r = invoke(t, map[string]string{"AGENTTREE_ROLE": "developer", "AGENTTREE_CONFIG": weak}, "next", "-i", itoa(id))
	assert.Equal(t, 2, r.code)
	assert.Equal(t, "implement", w.issue(t, id).Stage)

	r = invoke(t, humanEnv, "--config", weak, "stages")
	assert.Equal(t, 0, r.code, "a person may use another config: %s", r.stderr)
}
