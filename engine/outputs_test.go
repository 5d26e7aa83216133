package engine_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/engine"
)

// outputs is a pipeline whose hooks report values at each step of a move:
// the gate of a, the completion of a, and the entry of b.
const outputs = `
stages:
  - name: a
    pre_completion:
      - run: {command: "echo '{\"score\": \"9\"}'"}
    post_completion:
      - run: {command: "echo '{\"reviewed\": \"yes\"}'"}
  - name: b
    post_start:
      - run: {command: "echo '{\"deployed\": \"staging\"}'"}
  - name: done
    terminal: completion
`

// What hooks report along a move is kept on the issue, and the history
// says why the issue moved.
func TestMoveKeepsWhatItsHooksReported(t *testing.T) {
	e := newEngine(t, outputs)
	iss := create(t, e, "a", nil)

	res := next(t, e, iss.ID, agent)
	require.Equal(t, engine.StatusAdvanced, res.Status, res.Reasons)
	require.Equal(t, "b", res.To)
	assert.Empty(t, res.Unfinished)

	got, err := e.Store.Get(iss.ID)
	require.NoError(t, err)
	assert.Equal(t, "9", got.Outputs["score"], "the gate's output goes with the move")
	assert.Equal(t, "yes", got.Outputs["reviewed"], "the completion hook's output is saved")
	assert.Equal(t, "staging", got.Outputs["deployed"], "the entry hook's output is saved")
	assert.Nil(t, got.EntryPending, "b's entry hooks all passed")
	move := got.History[len(got.History)-1]
	assert.Equal(t, "gates passed", move.Reason)
	assert.Equal(t, res.Version, got.Version)
	assert.Equal(t, len(got.History), got.Version-2, "two more writes saved the hooks' outputs")
}

// A stage's output file is a document in the issue's directory: a path or
// a symlink out of it does not count.
func TestOutputFilesStayInTheIssueDirectory(t *testing.T) {
	for _, tt := range []struct {
		output, want string
		setup        func(t *testing.T, dir string)
	}{
		{"../../../../../../../etc/passwd", "leads outside the issue directory", nil},
		{"/etc/passwd", "absolute paths are not allowed", nil},
		{"review.md", "a symlink leads outside the issue directory", func(t *testing.T, dir string) {
			require.NoError(t, os.Symlink("/etc/passwd", filepath.Join(dir, "review.md")))
		}},
		{"review.md", "is not a regular file", func(t *testing.T, dir string) {
			require.NoError(t, os.Mkdir(filepath.Join(dir, "review.md"), 0o755))
		}},
		{"review.md", "is missing", nil},
	} {
		t.Run(tt.want, func(t *testing.T) {
			e := newEngine(t, "stages:\n  - name: a\n    output: "+tt.output+"\n  - name: b\n")
			iss := create(t, e, "a", nil)
			if tt.setup != nil {
				tt.setup(t, e.Store.Dir(iss.ID))
			}
			res := next(t, e, iss.ID, agent)
			require.Equal(t, engine.StatusBlocked, res.Status)
			require.Len(t, res.Reasons, 1)
			assert.Contains(t, res.Reasons[0], tt.want)
		})
	}
}
