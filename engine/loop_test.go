package engine_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/stages"
)

// loop is a pipeline whose entry hooks send an issue back and forth for
// ever: each of ping and pong redirects to the other while review.md has
// an item under "Critical Issues".
const loop = `
stages:
  - name: start
  - name: ping
    post_start:
      - section_check: {file: review.md, section: Critical Issues, expect: empty, on_fail: pong}
  - name: pong
    post_start:
      - section_check: {file: review.md, section: Critical Issues, expect: empty, on_fail: ping}
  - name: done
    terminal: completion
`

func TestRedirectLoopsAreCutShort(t *testing.T) {
	e := newEngine(t, loop)
	iss := create(t, e, "start", nil)
	write(t, e, iss.ID, "review.md", "## Critical Issues\n- still broken\n")

	done := make(chan *engine.Result, 1)
	go func() {
		res, err := e.Next(context.Background(), iss.ID, agent, false)
		assert.NoError(t, err)
		done <- res
	}()
	var res *engine.Result
	require.Eventually(t, func() bool {
		select {
		case res = <-done:
			return true
		default:
			return false
		}
	}, 20*time.Second, 10*time.Millisecond, "next never returned: the redirect loop was not bounded")

	require.Equal(t, engine.StatusAdvanced, res.Status, res.Reasons)
	assert.Contains(t, res.Warnings, "stopped following redirects at ping after 8 hops; check the hooks for a loop")
	got, err := e.Store.Get(iss.ID)
	require.NoError(t, err)
	// create, the advance, then eight redirects.
	require.Len(t, got.History, 10)
	assert.Equal(t, stages.MoveAdvance, got.History[1].Kind)
	for _, h := range got.History[2:] {
		assert.Equal(t, stages.MoveRedirect, h.Kind)
	}
	assert.Equal(t, res.To, got.Stage)
	assert.Equal(t, len(got.History), got.Version)
}

// A move to the stage the issue is at, which a gate or a completion hook
// may ask for, is a move like any other: written, with its history entry,
// and the stage entered again.
func TestMovesToTheSameStage(t *testing.T) {
	for _, tt := range []struct {
		name, config, from string
		history            []stages.Move
	}{
		{"a gate sends the issue back where it is", `
stages:
  - name: draft
    post_start:
      - run: {command: "echo '{\"entered\": \"again\"}'"}
    pre_completion:
      - section_check: {file: review.md, section: Critical Issues, expect: empty, on_fail: draft}
  - name: done
    terminal: completion
`, "draft", []stages.Move{stages.MoveRedirect}},
		{"a completion hook sends the issue to where it just went", `
stages:
  - name: draft
    post_completion:
      - section_check: {file: review.md, section: Critical Issues, expect: empty, on_fail: polish}
  - name: polish
    post_start:
      - run: {command: "echo '{\"entered\": \"again\"}'"}
  - name: done
    terminal: completion
`, "draft", []stages.Move{stages.MoveAdvance, stages.MoveRedirect}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newEngine(t, tt.config)
			iss := create(t, e, tt.from, nil)
			write(t, e, iss.ID, "review.md", "## Critical Issues\n- still broken\n")
			res := next(t, e, iss.ID, agent)
			require.Equal(t, engine.StatusAdvanced, res.Status, res.Reasons)
			assert.Equal(t, stages.MoveRedirect, res.Kind)
			got, err := e.Store.Get(iss.ID)
			require.NoError(t, err)
			var kinds []stages.Move
			for _, h := range got.History[1:] {
				kinds = append(kinds, h.Kind)
			}
			assert.Equal(t, tt.history, kinds)
			last := got.History[len(got.History)-1]
			assert.Equal(t, last.From, last.To, "the last move stays where it is")
			assert.Equal(t, "again", got.Outputs["entered"], "the stage is entered again")
			assert.Equal(t, res.To, got.Stage)
			assert.Equal(t, res.Version, got.Version)
			assert.Empty(t, res.Warnings)
		})
	}
}
