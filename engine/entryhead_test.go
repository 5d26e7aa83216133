package engine_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/hooks"
	"github.com/agenttree/agenttree/hooks/builtin"
	"github.com/agenttree/agenttree/stages"
)

// headForge is a PR whose head the entry hooks read and move: `open`
// reports it, `ci` passes on it (or waits while wait is set), and `move`
// pushes a new head (each of moves in turn, then none) and passes, or
// waits for CI on it when moveWaits is set.
type headForge struct {
	mu        sync.Mutex
	head      string
	wait      bool
	moves     []string
	moveWaits bool
	calls     map[string]int
}

func (f *headForge) registry() *hooks.Registry {
	reg := builtin.Registry()
	pr := func() map[string]string { return map[string]string{"pr_number": "1", "head_sha": f.head} }
	reg.Register(hooks.Def{HookSpec: stages.HookSpec{Name: "open", Outputs: []string{"pr_number", "head_sha"}},
		Run: func(context.Context, *hooks.Call) hooks.Outcome {
			f.called("open")
			return hooks.Outcome{Kind: hooks.KindPass, Outputs: pr()}
		}})
	reg.Register(hooks.Def{HookSpec: stages.HookSpec{Name: "ci", Outputs: []string{"pr_number", "head_sha", stages.CIPassedSHA}},
		Run: func(context.Context, *hooks.Call) hooks.Outcome {
			f.called("ci")
			if f.wait {
				return hooks.Outcome{Kind: hooks.KindPending, Reason: "CI running on " + f.head, Outputs: pr()}
			}
			o := hooks.Outcome{Kind: hooks.KindPass, Outputs: pr()}
			o.Outputs[stages.CIPassedSHA] = f.head
			return o
		}})
	reg.Register(hooks.Def{HookSpec: stages.HookSpec{Name: "move", Outputs: []string{"head_sha"}},
		Run: func(context.Context, *hooks.Call) hooks.Outcome {
			f.called("move")
			if len(f.moves) == 0 {
				return hooks.Pass()
			}
			f.head, f.moves = f.moves[0], f.moves[1:]
			if f.moveWaits {
				return hooks.Outcome{Kind: hooks.KindPending, Reason: "CI must pass on " + f.head, Outputs: map[string]string{"head_sha": f.head}}
			}
			return hooks.Outcome{Kind: hooks.KindPass, Outputs: map[string]string{"head_sha": f.head}}
		}})
	return reg
}

func (f *headForge) called(name string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.calls == nil {
		f.calls = map[string]int{}
	}
	f.calls[name]++
}

func (f *headForge) count(name string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[name]
}

const movesItsHead = `
stages:
  - name: implement
  - name: pr_ready
    host: controller
    post_start: [open, ci, move]
  - name: review
    human_review: true
  - name: accepted
    terminal: completion
`

// An entry hook that moves the PR's head (a rebase) leaves the hooks
// before it passed on another head: the entry starts again from its first
// hook, so the issue leaves the stage only with CI passed on the head it
// has.
func TestAnEntryHookThatMovesTheHeadStartsTheEntryAgain(t *testing.T) {
	tests := []struct {
		name      string
		moves     []string
		moveWaits bool
		// calls are the controller's passes until the entry is done, with
		// the hooks each ran: open, ci, move.
		calls [][3]int
		// pending is the entry's record after the first pass.
		pending *issues.EntryPending
	}{
		{name: "a rebase that passes: again at once", moves: []string{"b2"},
			calls: [][3]int{{2, 2, 2}}},
		{name: "a rebase that waits for CI: again on the next pass", moves: []string{"b2"}, moveWaits: true,
			calls: [][3]int{{1, 1, 1}, {2, 2, 2}}, pending: &issues.EntryPending{Stage: "pr_ready", From: "implement"}},
		{name: "a head that moves again: waits for the next pass", moves: []string{"b2", "c3"},
			calls: [][3]int{{2, 2, 2}, {3, 3, 3}}, pending: &issues.EntryPending{Stage: "pr_ready", From: "implement"}},
		{name: "a head that stays: each hook once",
			calls: [][3]int{{1, 1, 1}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &headForge{head: "a1", moves: tt.moves, moveWaits: tt.moveWaits}
			e := engineWith(t, movesItsHead, f.registry())
			iss := create(t, e, "implement", nil)
			res := next(t, e, iss.ID, agent)
			require.Equal(t, "pr_ready", res.To, res.Reasons)
			for i, want := range tt.calls {
				res = reconcile(t, e, iss.ID)
				assert.Equal(t, want, [3]int{f.count("open"), f.count("ci"), f.count("move")}, "hooks run by pass %d: %+v", i+1, res)
				got, err := e.Store.Get(iss.ID)
				require.NoError(t, err)
				if i == 0 && tt.pending != nil {
					assert.Equal(t, tt.pending, got.EntryPending, "the entry starts again from its first hook")
					assert.Equal(t, engine.StatusWaiting, res.Status, res.Reasons)
				}
			}
			got, err := e.Store.Get(iss.ID)
			require.NoError(t, err)
			require.Equal(t, "review", got.Stage, describeIssue(got))
			assert.Nil(t, got.EntryPending)
			assert.Equal(t, f.head, got.HeadSHA)
			assert.Equal(t, f.head, got.Outputs[stages.CIPassedSHA], "CI passed on the head the issue has")
		})
	}
}

// The entry's record keeps the head its hooks passed on: when the issue's
// head is another by the next pass (written by another command, or by a
// hook whose record a crash lost), the entry starts again from its first
// hook; a record of hooks passed on the head the issue has goes on from
// where it stopped.
func TestAnEntryRecordOfAnotherHeadStartsAgain(t *testing.T) {
	for _, head := range []string{"a1", "b2"} {
		t.Run(head, func(t *testing.T) {
			f := &headForge{head: "a1", wait: true}
			e := engineWith(t, movesItsHead, f.registry())
			iss := create(t, e, "implement", nil)
			next(t, e, iss.ID, agent)
			res := reconcile(t, e, iss.ID)
			require.Equal(t, engine.StatusWaiting, res.Status, res.Reasons)
			got, err := e.Store.Get(iss.ID)
			require.NoError(t, err)
			require.Equal(t, &issues.EntryPending{Stage: "pr_ready", From: "implement", Done: 1, Head: "a1"}, got.EntryPending, "open passed on a1")

			f.head, f.wait = head, false
			tx, cur, err := e.Store.Begin(context.Background(), iss.ID)
			require.NoError(t, err)
			_, err = tx.Update(cur.Version, func(i *issues.Issue) error { i.HeadSHA = head; return nil })
			tx.Unlock()
			require.NoError(t, err)

			res = reconcile(t, e, iss.ID)
			got, err = e.Store.Get(iss.ID)
			require.NoError(t, err)
			require.Equal(t, "review", got.Stage, describeIssue(got))
			opens := 1
			if head != "a1" {
				opens = 2
				assert.Contains(t, res.Notes, "the PR's head moved from a1 to b2: pr_ready's entry runs again from its first hook, on the new head")
			}
			assert.Equal(t, opens, f.count("open"))
			assert.Equal(t, head, got.Outputs[stages.CIPassedSHA])
		})
	}
}

func describeIssue(iss *issues.Issue) string {
	return fmt.Sprintf("at %s, entry pending %+v, outputs %v", iss.Stage, iss.EntryPending, iss.Outputs)
}
