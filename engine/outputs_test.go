package engine_test

import (
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
