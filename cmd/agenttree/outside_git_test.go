package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/internal/gittest"
	"github.com/agenttree/agenttree/internal/testpipeline"
)

func TestNextOutsideAGitRepositorySaysSo(t *testing.T) {
	w := newWorkspace(t, testpipeline.Read(t, "cli"))
	id := w.create(t, "Add login")
	r := w.run(t, humanEnv, "next", "-i", itoa(id))
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stderr, "is not in a git repository")
	assert.Contains(t, r.stderr, "run `git init` there")

	gittest.Run(t, w.dir, "init", "-q")
	r = w.run(t, humanEnv, "next", "-i", itoa(id))
	assert.NotContains(t, r.stderr, "git repository")
}
