package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/internal/testpipeline"
)

// `issue list --stage` with a stage the pipeline has none of is a usage
// error that names the closest stage, not an empty list that looks like
// "no issue is there".
func TestIssueListRefusesAStageThePipelineLacks(t *testing.T) {
	w := newWorkspace(t, testpipeline.Read(t, "cli"))
	w.create(t, "Something")
	r := w.run(t, humanEnv, "issue", "list", "--stage", "implemnt")
	require.Equal(t, exitUsage, r.code, r.stdout)
	assert.Contains(t, r.stderr, `no stage "implemnt"`)
	assert.Contains(t, r.stderr, "did you mean implement?")

	r = w.run(t, humanEnv, "issue", "list", "--stage", "implement")
	assert.Equal(t, exitOK, r.code, r.stderr)
}
