package engine_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/forge"
	"github.com/agenttree/agenttree/hooks"
	"github.com/agenttree/agenttree/stages"
	"github.com/agenttree/agenttree/stages/load"
)

// engineWith is an engine over text with the hooks of reg and `note`, a
// hook that passes saying its text.
func engineWith(t *testing.T, text string, reg *hooks.Registry, opts ...engine.Option) *engine.Engine {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, stages.FileName)
	require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
	reg.Register(hooks.Def{HookSpec: stages.HookSpec{Name: "note", Main: "text", Params: []stages.Param{{Name: "text", Type: stages.ParamString}}},
		Run: func(_ context.Context, c *hooks.Call) hooks.Outcome {
			return hooks.Outcome{Kind: hooks.KindPass, Message: c.Params["text"].(string)}
		}})
	cfg, err := load.File(path, reg)
	require.NoError(t, err)
	store, err := issues.Open(filepath.Join(dir, "_agenttree"))
	require.NoError(t, err)
	return engine.New(cfg, store, reg, nil, opts...)
}

// What the hooks said comes out in the order they ran: completion, then
// entry.
func TestNotesComeInTheOrderTheHooksRan(t *testing.T) {
	e := engineWith(t, `
stages:
  - name: a
    post_completion: [{note: "completed a"}]
  - name: b
    post_start: [{note: "entered b"}]
  - name: done
    terminal: completion
`, registry())
	iss := create(t, e, "a", nil)
	assert.Equal(t, []string{"completed a", "entered b"}, next(t, e, iss.ID, agent).Notes)
}

// A completion hook that sends the issue on to a sibling substage of the
// stage just entered: the issue enters x from a, so x's own post_start
// runs.
func TestACompletionRedirectEntersTheStageFromTheStageCompleted(t *testing.T) {
	e := engineWith(t, `
stages:
  - name: a
    post_completion:
      - section_check: {file: review.md, section: Critical Issues, expect: empty, on_fail: x.two}
  - name: x
    post_start:
      - run: {command: "echo '{\"xstart\": \"1\"}'"}
    substages:
      - name: one
      - name: two
  - name: done
    terminal: completion
`, registry())
	iss := create(t, e, "a", nil)
	write(t, e, iss.ID, "review.md", "## Critical Issues\n- broken\n")
	require.Equal(t, "x.two", next(t, e, iss.ID, agent).To)
	got, err := e.Store.Get(iss.ID)
	require.NoError(t, err)
	assert.Equal(t, "1", got.Outputs["xstart"], "x's own post_start ran when the issue entered x")
}

// A step back to the stage the issue is at is written and the stage
// entered again (looplab/fsm makes it no transition at all).
func TestAStepBackToTheSameStageIsAMove(t *testing.T) {
	e := engineWith(t, `
stages:
  - name: a
    pre_completion:
      - file_exists: {file: missing.md, on_failure: {step_back_to: a}}
  - name: done
    terminal: completion
`, registry())
	iss := create(t, e, "a", nil)
	res := next(t, e, iss.ID, agent)
	assert.Equal(t, engine.StatusSteppedBack, res.Status)
	assert.Equal(t, stages.MoveStepBack, res.Kind)
	assert.Equal(t, "a", res.To)
	got, err := e.Store.Get(iss.ID)
	require.NoError(t, err)
	last := got.History[len(got.History)-1]
	assert.Equal(t, []string{"a", "a", "step_back"}, []string{last.From, last.To, string(last.Kind)})
}

// An approval made again comes before what the entry hooks it unblocked
// said.
func TestAnApprovalAgainIsSaidBeforeWhatItUnblocked(t *testing.T) {
	reg := hooks.NewRegistry(
		hooks.Def{HookSpec: stages.HookSpec{Name: "approval_check", Approval: true}, Run: func(context.Context, *hooks.Call) hooks.Outcome {
			return hooks.Outcome{Kind: hooks.KindPass, Outputs: map[string]string{"approved_sha": "abc"}}
		}},
		hooks.Def{HookSpec: stages.HookSpec{Name: "gatekeeper"}, Run: func(_ context.Context, c *hooks.Call) hooks.Outcome {
			if c.Issue.Outputs["approved_sha"] == "" {
				return hooks.Outcome{Kind: hooks.KindFail, Reason: "not approved at head", Class: hooks.ClassGeneral}
			}
			return hooks.Outcome{Kind: hooks.KindPass, Message: "merged"}
		}})
	e := engineWith(t, `
stages:
  - name: review
    human_review: true
  - name: accepted
    terminal: completion
    post_start: [{gatekeeper: }]
`, reg)
	iss := create(t, e, "review", nil)
	_, err := e.Approve(context.Background(), iss.ID, human, false)
	require.NoError(t, err)
	res, err := e.Approve(context.Background(), iss.ID, human, false)
	require.NoError(t, err)
	assert.Equal(t, []string{"approved the PR at its current head", "merged"}, res.Notes)
}

// A person approves at a review, or again after one; not ahead of it,
// while a controller stage before the review waits for CI.
func TestApprovingAheadOfTheReviewIsRefused(t *testing.T) {
	reg := hooks.NewRegistry(
		hooks.Def{HookSpec: stages.HookSpec{Name: "approval_check", Approval: true}, Run: func(context.Context, *hooks.Call) hooks.Outcome {
			return hooks.Outcome{Kind: hooks.KindPass}
		}},
		hooks.Def{HookSpec: stages.HookSpec{Name: "ci_wait", Waits: true}, Run: func(context.Context, *hooks.Call) hooks.Outcome {
			return hooks.Outcome{Kind: hooks.KindPending, Reason: "CI is running"}
		}})
	e := engineWith(t, `
stages:
  - name: work
  - name: pr_ready
    host: controller
    post_start: [{ci_wait: }]
  - name: review
    human_review: true
  - name: accepted
    terminal: completion
`, reg)
	iss := create(t, e, "work", nil)
	res := next(t, e, iss.ID, agent)
	require.Equal(t, "pr_ready", res.To)
	got, err := e.Store.Get(iss.ID)
	require.NoError(t, err)
	require.NotNil(t, got.EntryPending, "CI is still running")
	_, err = e.Approve(context.Background(), iss.ID, human, false)
	require.ErrorIs(t, err, engine.ErrNotReview)
}

// Entry hooks that run again and send the issue on say why.
func TestResumedEntryHooksThatRedirectSayWhy(t *testing.T) {
	e := engineWith(t, `
stages:
  - name: a
  - name: b
    post_start:
      - section_check: {file: review.md, section: Critical Issues, expect: empty, on_fail: c}
  - name: c
  - name: done
    terminal: completion
`, registry())
	iss := create(t, e, "a", nil)
	next(t, e, iss.ID, agent) // b's entry fails: no review.md
	write(t, e, iss.ID, "review.md", "## Critical Issues\n- broken\n")
	res := next(t, e, iss.ID, agent)
	require.Equal(t, "c", res.To)
	assert.NotEmpty(t, res.Reasons, "why the issue went to c")
}

// Approving an issue without a PR does not open the forge (a lazily
// opened one may need a token the person does not have at hand).
func TestApprovingWithoutAPRLeavesTheForgeClosed(t *testing.T) {
	opened := 0
	e := engineWith(t, "stages:\n  - name: review\n    human_review: true\n  - name: done\n    terminal: completion\n", registry(),
		engine.WithForge(forge.Lazy(func() (forge.Forge, error) { opened++; return nil, errors.New("no token") })))
	iss := create(t, e, "review", nil)
	_, err := e.Approve(context.Background(), iss.ID, human, true)
	require.NoError(t, err)
	assert.Zero(t, opened)
}

// A completion hook that sends the issue on to x.two enters x from a: x's
// own entry hooks run, and when they fail they stay pending, to run again
// from a.
func TestEntryWorkLeftByACompletionRedirectIsPending(t *testing.T) {
	e := engineWith(t, `
stages:
  - name: a
    post_completion:
      - section_check: {file: review.md, section: Critical Issues, expect: empty, on_fail: x.two}
  - name: x
    post_start:
      - run: {command: "exit 1"}
    substages:
      - name: one
      - name: two
  - name: done
    terminal: completion
`, registry())
	iss := create(t, e, "a", nil)
	write(t, e, iss.ID, "review.md", "## Critical Issues\n- broken\n")
	res := next(t, e, iss.ID, agent)
	require.Equal(t, "x.two", res.To)
	assert.NotEmpty(t, res.Unfinished)
	got, err := e.Store.Get(iss.ID)
	require.NoError(t, err)
	require.NotNil(t, got.EntryPending)
	assert.Equal(t, issues.EntryPending{Stage: "x.two", From: "a", Failures: res.Unfinished}, *got.EntryPending)
}

// An entry hook that steps back to the stage being entered fails the
// entry; it does not enter the stage again and again.
func TestAnEntryStepBackToItsOwnStageIsAFailedEntry(t *testing.T) {
	e := engineWith(t, `
stages:
  - name: a
  - name: b
    on_failure: {step_back_to: b}
    post_start:
      - file_exists: {file: x.md, on_failure: step_back}
  - name: done
    terminal: completion
`, registry())
	iss := create(t, e, "a", nil)
	res := next(t, e, iss.ID, agent)
	require.Equal(t, engine.StatusAdvanced, res.Status)
	assert.Equal(t, "b", res.To)
	require.Len(t, res.Unfinished, 1)
	assert.Contains(t, res.Unfinished[0], "x.md")
	got, err := e.Store.Get(iss.ID)
	require.NoError(t, err)
	assert.Len(t, got.History, 2, "created, then one move")
	require.NotNil(t, got.EntryPending)
}

// The forge a transition asks is the engine's forge as it is then: the
// controller wraps it in its per-tick batch after New, and a transition
// that asked the forge New was given would bypass the batch (requests
// the batch already made, and a hook's push that the batch must forget).
func TestTransitionsAskTheForgeTheEngineHasNow(t *testing.T) {
	var first, now int
	e := engineWith(t, "stages:\n  - name: review\n    human_review: true\n  - name: done\n    terminal: completion\n", registry(),
		engine.WithForge(forge.Lazy(func() (forge.Forge, error) { first++; return nil, errors.New("the forge given to New") })))
	iss := create(t, e, "review", nil)
	_, err := e.Store.Update(context.Background(), iss.ID, iss.Version, func(i *issues.Issue) error { i.PRNumber = 7; return nil })
	require.NoError(t, err)
	e.Forge = forge.Lazy(func() (forge.Forge, error) { now++; return nil, errors.New("the forge set after New") })

	_, err = e.Approve(context.Background(), iss.ID, human, true)
	require.NoError(t, err)
	assert.Zero(t, first, "the forge New was given is asked nothing once another is set")
	assert.Positive(t, now, "the review's PR is read from the forge the engine has now")
}
