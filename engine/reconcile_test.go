package engine_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/engine/outbox"
	"github.com/agenttree/agenttree/engine/people"
	"github.com/agenttree/agenttree/hooks"
	"github.com/agenttree/agenttree/hooks/builtin"
	"github.com/agenttree/agenttree/stages"
)

// script is a CI stand-in: each call of `ci` returns the next outcome of
// its list (the last one for ever after), and `open` counts its calls.
type script struct {
	mu    sync.Mutex
	ci    []hooks.Outcome
	calls map[string]int
}

func (s *script) registry() *hooks.Registry {
	reg := builtin.Registry()
	count := func(name string) {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.calls == nil {
			s.calls = map[string]int{}
		}
		s.calls[name]++
	}
	reg.Register(hooks.Def{HookSpec: stages.HookSpec{Name: "open", Outputs: []string{"pr_number"}}, Run: func(context.Context, *hooks.Call) hooks.Outcome {
		count("open")
		return hooks.Outcome{Kind: hooks.KindPass, Outputs: map[string]string{"pr_number": "1"}}
	}})
	reg.Register(hooks.Def{HookSpec: stages.HookSpec{Name: "ci",
		Outputs: []string{"failed_checks", "failure_details", "head_sha", "failure_reason"}}, Run: func(context.Context, *hooks.Call) hooks.Outcome {
		count("ci")
		s.mu.Lock()
		defer s.mu.Unlock()
		o := s.ci[0]
		if len(s.ci) > 1 {
			s.ci = s.ci[1:]
		}
		return o
	}})
	reg.Register(hooks.Def{HookSpec: stages.HookSpec{Name: "tell", Main: "text", Params: []stages.Param{{Name: "text", Type: stages.ParamString}}},
		Run: func(_ context.Context, c *hooks.Call) hooks.Outcome {
			return hooks.Outcome{Kind: hooks.KindPass, Send: []string{c.Params["text"].(string)}}
		}})
	return reg
}

func (s *script) count(name string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[name]
}

// ciFailed is a failed CI run on head with the given failing checks.
func ciFailed(head string, checks ...string) hooks.Outcome {
	o := hooks.FailAs(hooks.ClassCIFailed, "CI failed on %s", head)
	list := ""
	for i, c := range checks {
		if i > 0 {
			list += ", "
		}
		list += c
	}
	o.Outputs = map[string]string{"failed_checks": list, "head_sha": head, "failure_reason": o.Reason}
	o.Files = map[string]string{"ci_feedback.md": "# CI failed\n"}
	return o
}

const controlled = `
ci_polling: {max_retries: 3}
circuit_breaker: {no_progress_threshold: 10, same_error_threshold: 10, half_open_after: 2}
stages:
  - name: implement
    substages:
      - name: code
      - name: feedback
  - name: pr_ready
    host: controller
    post_start:
      - open:
      - ci:
    on_failure:
      step_back_to: implement.feedback
      message: "CI: {{failure_reason}} (attempt {{attempt}} of {{max_retries}})"
  - name: review
    human_review: true
  - name: accepted
    terminal: completion
  - name: not_doing
    terminal: abandon
    redirect_only: true
`

func reconcile(t *testing.T, e *engine.Engine, id int) *engine.Result {
	t.Helper()
	res, err := e.Reconcile(context.Background(), id)
	require.NoError(t, err)
	return res
}

func TestControllerStageRunsFromItsCursorAndStepsBackWithTheStageMessage(t *testing.T) {
	s := &script{ci: []hooks.Outcome{hooks.Pending(3*time.Second, "1 of 2 checks running"), ciFailed("aaa", "test-unit")}}
	e := engineWith(t, controlled, s.registry())
	iss := create(t, e, "implement.feedback", nil)

	res := next(t, e, iss.ID, agent)
	require.Equal(t, "pr_ready", res.To)
	assert.Zero(t, s.count("open"), "an agent's move leaves the controller stage's hooks to the controller")
	res = next(t, e, iss.ID, agent)
	assert.Equal(t, engine.StatusWaiting, res.Status, "an agent cannot move a controller stage")

	res = reconcile(t, e, iss.ID)
	assert.Equal(t, engine.StatusWaiting, res.Status, res.Reasons)
	assert.Equal(t, 3*time.Second, res.Outcome.RetryAfter)
	assert.Contains(t, res.Reasons, "1 of 2 checks running")
	got, err := e.Store.Get(iss.ID)
	require.NoError(t, err)
	require.NotNil(t, got.EntryPending)
	assert.Equal(t, 1, got.EntryPending.Done, "the cursor is past the hook that passed")

	res = reconcile(t, e, iss.ID)
	require.Equal(t, engine.StatusSteppedBack, res.Status, res.Reasons)
	assert.Equal(t, 1, s.count("open"), "a hook that passed is not run again")
	require.NotNil(t, res.StepBack)
	assert.Equal(t, "pr_ready", res.StepBack.From)
	assert.Equal(t, "implement.feedback", res.StepBack.To)
	assert.Equal(t, "CI failed on aaa", res.StepBack.Reason)
	assert.Equal(t, "CI: CI failed on aaa (attempt 1 of 3)", res.StepBack.Message)
	assert.Equal(t, string(hooks.ClassCIFailed), res.StepBack.Class)
	assert.Equal(t, 1, res.StepBack.Attempt)
	assert.Equal(t, 3, res.StepBack.MaxRetries)
	assert.Contains(t, res.StepBack.Feedback, "ci_feedback.md")

	got, err = e.Store.Get(iss.ID)
	require.NoError(t, err)
	assert.Equal(t, "implement.feedback", got.Stage)
	assert.Equal(t, 1, got.Attempts[string(hooks.ClassCIFailed)])
	last := got.History[len(got.History)-1]
	assert.Equal(t, stages.MoveStepBack, last.Kind)
	assert.Equal(t, "controller", last.Actor)

	msgs := e.Messages(got)
	require.Len(t, msgs, 1)
	assert.Equal(t, outbox.ToAgent, msgs[0].To)
	assert.Contains(t, msgs[0].Text, "pr_ready → implement.feedback")
	assert.Contains(t, msgs[0].Text, "ci_feedback.md")
	assert.Contains(t, msgs[0].Text, "run `agenttree next` when fixed")
}

func TestSpentBudgetEscalatesAndOnlyAPersonResumes(t *testing.T) {
	s := &script{ci: []hooks.Outcome{ciFailed("aaa", "lint")}}
	e := engineWith(t, controlled, s.registry())
	iss := create(t, e, "implement.feedback", nil)
	for attempt := 1; attempt <= 3; attempt++ {
		require.Equal(t, "pr_ready", next(t, e, iss.ID, agent).To)
		// A new head each time, failing differently: no progress, but the
		// breaker's thresholds here are above the budget, so it stops it.
		s.ci = []hooks.Outcome{ciFailed("head"+string(rune('a'+attempt)), "check"+string(rune('a'+attempt)))}
		res := reconcile(t, e, iss.ID)
		require.Equal(t, engine.StatusSteppedBack, res.Status, "attempt %d: %v", attempt, res.Reasons)
	}
	require.Equal(t, "pr_ready", next(t, e, iss.ID, agent).To)
	res := reconcile(t, e, iss.ID)
	require.Equal(t, engine.StatusEscalated, res.Status, res.Reasons)
	require.NotNil(t, res.Escalated)
	assert.Equal(t, issues.EscalatedBudget, res.Escalated.Kind)
	assert.Contains(t, res.Escalated.Reason, "CI failed again after 3 step backs for it, its budget (3)")

	got0, err := e.Store.Get(iss.ID)
	require.NoError(t, err)
	assert.Equal(t, 3, got0.Attempts[string(hooks.ClassCIFailed)], "the budget is spent, not overspent: the failure that escalated is no step back")

	got, err := e.Store.Get(iss.ID)
	require.NoError(t, err)
	assert.Equal(t, "pr_ready", got.Stage, "an escalated issue stays where it is")
	assert.Equal(t, stages.MoveEscalate, got.History[len(got.History)-1].Kind)
	assert.Equal(t, outbox.ToManager, e.Messages(got)[0].To, "people are told")

	calls := s.count("ci")
	res = reconcile(t, e, iss.ID)
	assert.Equal(t, engine.StatusEscalated, res.Status)
	assert.Equal(t, calls, s.count("ci"), "the controller leaves an escalated issue alone")
	res = next(t, e, iss.ID, agent)
	assert.Equal(t, engine.StatusEscalated, res.Status)
	assert.Contains(t, res.Reasons[0], "agenttree resume")

	_, err = people.Resume(context.Background(), e, iss.ID, human, "flaky runner")
	require.NoError(t, err)
	pending, err := e.Outbox(iss.ID).Pending()
	require.NoError(t, err)
	last := pending[len(pending)-1]
	assert.Equal(t, outbox.ToAgent, last.To)
	assert.Contains(t, last.Text, "goes on at pr_ready", "the agent told to stop is told it goes on")
}

func TestSameFailureOpensTheBreakerBeforeTheBudget(t *testing.T) {
	text := `
ci_polling: {max_retries: 10}
circuit_breaker: {no_progress_threshold: 5, same_error_threshold: 3, half_open_after: 2}
` + controlled[len("\nci_polling: {max_retries: 3}\ncircuit_breaker: {no_progress_threshold: 10, same_error_threshold: 10, half_open_after: 2}\n"):]
	s := &script{ci: []hooks.Outcome{ciFailed("same", "test-unit")}}
	e := engineWith(t, text, s.registry())
	iss := create(t, e, "implement.feedback", nil)
	var res *engine.Result
	for i := 0; i < 4; i++ {
		require.Equal(t, "pr_ready", next(t, e, iss.ID, agent).To)
		res = reconcile(t, e, iss.ID)
		if res.Status == engine.StatusEscalated {
			break
		}
		require.Equal(t, engine.StatusSteppedBack, res.Status, res.Reasons)
	}
	require.Equal(t, engine.StatusEscalated, res.Status, res.Reasons)
	assert.Equal(t, issues.EscalatedBreaker, res.Escalated.Kind)
	got, err := e.Store.Get(iss.ID)
	require.NoError(t, err)
	require.NotNil(t, got.Breaker)
	assert.Equal(t, "open", got.Breaker.State)
}

func TestFailurePolicyListSendsThenStepsBack(t *testing.T) {
	s := &script{ci: []hooks.Outcome{ciFailed("aaa", "lint")}}
	e := engineWith(t, `
stages:
  - name: implement
    substages:
      - name: code
      - name: feedback
  - name: pr_ready
    host: controller
    post_start:
      - ci: {on_failure: [{tell: "CI is red, look at lint"}, {step_back_to: implement.code}]}
  - name: accepted
    terminal: completion
`, s.registry())
	iss := create(t, e, "pr_ready", nil)
	res := reconcile(t, e, iss.ID)
	require.Equal(t, engine.StatusSteppedBack, res.Status, res.Reasons)
	assert.Equal(t, "implement.code", res.To)
	pending, err := e.Outbox(iss.ID).Pending()
	require.NoError(t, err)
	require.Len(t, pending, 2, "the hook's message, then the step back's, queued as the move is written")
	assert.Equal(t, "CI is red, look at lint", pending[0].Text)
	assert.Contains(t, pending[1].Text, "stepped back pr_ready → implement.code")
}

func TestControllerFailureThatLeadsNowhereCallsAPerson(t *testing.T) {
	s := &script{ci: []hooks.Outcome{ciFailed("aaa", "lint")}}
	e := engineWith(t, `
stages:
  - name: work
  - name: pr_ready
    host: controller
    post_start:
      - ci:
  - name: accepted
    terminal: completion
`, s.registry())
	iss := create(t, e, "pr_ready", nil)
	res := reconcile(t, e, iss.ID)
	require.Equal(t, engine.StatusEscalated, res.Status, res.Reasons)
	assert.Contains(t, res.Escalated.Reason, "nothing in")
	assert.Contains(t, res.Escalated.Reason, "on_failure: {step_back_to: STAGE}")
}

func TestSettleMovesToTheFlowsTerminalStage(t *testing.T) {
	s := &script{ci: []hooks.Outcome{hooks.Pass()}}
	e := engineWith(t, controlled, s.registry())
	iss := create(t, e, "review", nil)
	res, err := e.Settle(context.Background(), iss.ID, stages.TerminalCompletion, "PR #1 was merged outside agenttree")
	require.NoError(t, err)
	assert.Equal(t, "accepted", res.To)
	assert.Equal(t, stages.MoveManual, res.Kind)

	other := create(t, e, "implement.code", nil)
	res, err = e.Settle(context.Background(), other.ID, stages.TerminalAbandon, "PR #2 was closed without merging")
	require.NoError(t, err)
	assert.Equal(t, "not_doing", res.To)

	res, err = e.Settle(context.Background(), other.ID, stages.TerminalCompletion, "again")
	require.NoError(t, err)
	assert.Equal(t, engine.StatusFinal, res.Status, "a finished issue stays finished")
}

func TestControllerHooksOfAHumanReviewLeaveTheApprovalToAPerson(t *testing.T) {
	s := &script{ci: []hooks.Outcome{hooks.Pass()}}
	e := engineWith(t, `
stages:
  - name: implement
    substages:
      - name: code
      - name: feedback
  - name: implementation_review
    human_review: true
    host: controller
    post_start:
      - open:
      - ci:
    on_failure: {step_back_to: implement.feedback}
  - name: accepted
    terminal: completion
`, s.registry())
	iss := create(t, e, "implement.feedback", nil)
	require.Equal(t, "implementation_review", next(t, e, iss.ID, agent).To)
	res, err := e.Approve(context.Background(), iss.ID, human, false)
	require.NoError(t, err)
	assert.Equal(t, engine.StatusWaiting, res.Status, "the controller's hooks run first: %v", res.Reasons)

	res = reconcile(t, e, iss.ID)
	assert.Equal(t, engine.StatusWaiting, res.Status)
	assert.Contains(t, res.Reasons[0], "waits for a person's review")
	assert.Equal(t, "implementation_review", res.To, "the controller never approves")
	assert.Equal(t, 1, s.count("ci"))

	res, err = e.Approve(context.Background(), iss.ID, human, false)
	require.NoError(t, err)
	assert.Equal(t, "accepted", res.To, res.Reasons)
}

// watching is an engine whose implement and review stages watch the
// issue's PR in the background, CI answering as s says: at implement a CI
// failure sends the agent a message (and no move), at review a conflict
// calls a person.
func watching(t *testing.T, s *script) *engine.Engine {
	t.Helper()
	reg := hooks.NewRegistry(
		hooks.Def{HookSpec: stages.HookSpec{Name: "ci", Waits: true, Params: []stages.Param{{Name: "poll_interval", Type: stages.ParamDuration}}},
			Run: func(context.Context, *hooks.Call) hooks.Outcome {
				s.mu.Lock()
				defer s.mu.Unlock()
				return s.ci[0]
			}},
		hooks.Def{HookSpec: stages.HookSpec{Name: "watch", Watches: true, Params: []stages.Param{
			{Name: "interval", Type: stages.ParamDuration}, {Name: "on_ci_failure", Type: stages.ParamAny}, {Name: "on_conflict", Type: stages.ParamAny}}},
			Run: func(context.Context, *hooks.Call) hooks.Outcome { return hooks.Pass() }},
		hooks.Def{HookSpec: stages.HookSpec{Name: "tell", Main: "text", Params: []stages.Param{{Name: "text", Type: stages.ParamString}}},
			Run: func(_ context.Context, c *hooks.Call) hooks.Outcome {
				return hooks.Outcome{Kind: hooks.KindPass, Send: []string{c.Params["text"].(string)}}
			}},
	)
	return engineWith(t, `
stages:
  - name: implement
    post_start:
      - watch: {on_ci_failure: [{tell: "CI broke on your PR"}, fail]}
  - name: review
    human_review: true
    post_start:
      - watch: {on_conflict: escalate}
  - name: accepted
    terminal: completion
`, reg)
}

// withPR puts issue id's PR (number pr) at head.
func withPR(t *testing.T, e *engine.Engine, id, pr int, head string) {
	t.Helper()
	iss, err := e.Store.Get(id)
	require.NoError(t, err)
	_, err = e.Store.Update(context.Background(), id, iss.Version, func(i *issues.Issue) error {
		i.PRNumber, i.HeadSHA = pr, head
		return nil
	})
	require.NoError(t, err)
}

func TestBackgroundWatchActsOnAFailureOncePerHead(t *testing.T) {
	s := &script{}
	e := watching(t, s)
	iss := create(t, e, "implement", nil)
	withPR(t, e, iss.ID, 3, "aaa")

	s.ci = []hooks.Outcome{hooks.Pending(time.Second, "1 of 1 checks running")}
	res, err := e.WatchPR(context.Background(), iss.ID)
	require.NoError(t, err)
	assert.Equal(t, engine.StatusWaiting, res.Status)

	s.ci = []hooks.Outcome{ciFailed("aaa", "lint")}
	for range 2 {
		res, err = e.WatchPR(context.Background(), iss.ID)
		require.NoError(t, err)
		assert.Equal(t, "implement", res.To, "a message-only policy keeps the agent where it is")
	}
	pending, err := e.Outbox(iss.ID).Pending()
	require.NoError(t, err)
	require.Len(t, pending, 1, "one failure on one head is acted on once")
	assert.Equal(t, "CI broke on your PR", pending[0].Text)

	s.ci = []hooks.Outcome{ciFailed("bbb", "lint")}
	_, err = e.WatchPR(context.Background(), iss.ID)
	require.NoError(t, err)
	pending, err = e.Outbox(iss.ID).Pending()
	require.NoError(t, err)
	assert.Len(t, pending, 2, "a new head failing is news")

	review := create(t, e, "review", nil)
	withPR(t, e, review.ID, 4, "ccc")
	conflict := hooks.FailAs(hooks.ClassConflict, "PR #4 conflicts with main")
	s.ci = []hooks.Outcome{conflict}
	res, err = e.WatchPR(context.Background(), review.ID)
	require.NoError(t, err)
	assert.Equal(t, engine.StatusEscalated, res.Status, res.Reasons)
}

// The controller reuses the issue it scanned when its version is the one
// a command left it at (Outcome.Version): a watch that wrote its mark
// after the messages it queued or the escalation it made says so.
func TestBackgroundWatchReportsTheVersionItLeft(t *testing.T) {
	for _, tc := range []struct {
		name, stage string
		ci          hooks.Outcome
		status      engine.Status
	}{
		{"pending", "implement", hooks.Pending(time.Second, "1 of 1 checks running"), engine.StatusWaiting},
		{"a failure that only sends a message", "implement", ciFailed("aaa", "lint"), engine.StatusWaiting},
		{"a conflict that calls a person", "review", hooks.FailAs(hooks.ClassConflict, "PR #4 conflicts with main"), engine.StatusEscalated},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &script{ci: []hooks.Outcome{tc.ci}}
			e := watching(t, s)
			iss := create(t, e, tc.stage, nil)
			withPR(t, e, iss.ID, 3, "aaa")
			for try := range 2 { // the second acts on nothing it has not acted on
				res, err := e.WatchPR(context.Background(), iss.ID)
				require.NoError(t, err)
				if res == nil && tc.status == engine.StatusEscalated {
					break // an issue stopped for a person is not watched
				}
				require.NotNil(t, res, "try %d", try)
				if try == 0 {
					assert.Equal(t, tc.status, res.Status, res.Reasons)
				}
				got, err := e.Store.Get(iss.ID)
				require.NoError(t, err)
				assert.Equal(t, got.Version, res.Version, "try %d: the Result's version", try)
				assert.Equal(t, got.Version, res.Outcome.Version, "try %d: the Outcome's version", try)
			}
		})
	}
}

// The breaker tells failures apart by how each check failed, not by the
// check's name or the commit: one test after another failing in the same
// check is no "same failure".
func TestBreakerTellsFailuresApartByTheirDetails(t *testing.T) {
	text := `
ci_polling: {max_retries: 10}
circuit_breaker: {no_progress_threshold: 10, same_error_threshold: 2, half_open_after: 2}
` + controlled[len("\nci_polling: {max_retries: 3}\ncircuit_breaker: {no_progress_threshold: 10, same_error_threshold: 10, half_open_after: 2}\n"):]
	failing := func(head, detail string) hooks.Outcome {
		o := ciFailed(head, "test-unit")
		o.Outputs["failure_details"] = "test-unit\t--- FAIL: " + detail
		return o
	}
	s := &script{}
	e := engineWith(t, text, s.registry())
	iss := create(t, e, "implement.feedback", nil)
	for i, o := range []hooks.Outcome{failing("aaa1111", "TestLogin"), failing("bbb2222", "TestCheckout"), failing("ccc3333", "TestCheckout")} {
		require.Equal(t, "pr_ready", next(t, e, iss.ID, agent).To)
		s.ci = []hooks.Outcome{o}
		res := reconcile(t, e, iss.ID)
		if i < 2 {
			require.Equal(t, engine.StatusSteppedBack, res.Status, "failure %d: %v", i, res.Reasons)
			continue
		}
		require.Equal(t, engine.StatusEscalated, res.Status, "the same test twice opens it: %v", res.Reasons)
		assert.Contains(t, res.Escalated.Reason, "TestCheckout")
	}
}

// An agent blocked at the stage a failure sent it back to is told again
// what to do about that kind of failure.
func TestBlockedAfterAStepBackRepeatsWhatToDo(t *testing.T) {
	s := &script{ci: []hooks.Outcome{ciFailed("aaa", "lint")}}
	e := engineWith(t, strings.Replace(controlled, "      - name: feedback\n", "      - name: feedback\n        pre_completion:\n          - file_exists: fixed.md\n", 1), s.registry())
	iss := create(t, e, "pr_ready", nil)
	require.Equal(t, engine.StatusSteppedBack, reconcile(t, e, iss.ID).Status)
	res := next(t, e, iss.ID, agent)
	require.Equal(t, engine.StatusBlocked, res.Status, res.Reasons)
	assert.Contains(t, res.Instructions, "CI failed on your branch")
}
