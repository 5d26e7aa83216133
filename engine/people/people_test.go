package people_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/engine/people"
	"github.com/agenttree/agenttree/hooks"
	"github.com/agenttree/agenttree/hooks/builtin"
	"github.com/agenttree/agenttree/stages"
	"github.com/agenttree/agenttree/stages/load"
)

var (
	agent      = engine.Actor{Kind: engine.ActorAgent, Role: "developer"}
	human      = engine.Actor{Kind: engine.ActorHuman}
	controller = engine.Actor{Kind: engine.ActorController}
)

// newEngine is an engine over config text, with every built-in hook and
// an issue store of its own.
func newEngine(t *testing.T, text string) *engine.Engine {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, stages.FileName)
	require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
	reg := builtin.Registry()
	cfg, err := load.File(path, reg)
	require.NoError(t, err)
	store, err := issues.Open(filepath.Join(dir, "_agenttree"))
	require.NoError(t, err)
	return engine.New(cfg, store, reg, nil)
}

func create(t *testing.T, e *engine.Engine, stage string) *issues.Issue {
	t.Helper()
	iss, err := e.Create(context.Background(), engine.NewIssue{Title: "Add login page", Stage: stage})
	require.NoError(t, err)
	return iss
}

func next(t *testing.T, e *engine.Engine, id int, a engine.Actor) *engine.Result {
	t.Helper()
	res, err := e.Next(context.Background(), id, a, false)
	require.NoError(t, err)
	return res
}

// manualPipeline has what people's commands act on: a controller stage
// where issues escalate, reviews to reject from (one with a step-back
// target of its own), stages whose entry hooks leave a file or send the
// issue on, an abandon stage, and a flow without one.
const manualPipeline = `
stages:
  - name: backlog
    parking_lot: true
  - name: plan
    substages:
      - name: draft
      - name: review
        human_review: true
  - name: implement
    substages:
      - name: code
        post_start:
          - create_file: {dest: notes.md, content: "# Notes on issue {{issue_id}}"}
      - name: feedback
        pre_completion:
          - file_exists: review.md
  - name: triage
    redirect_only: true
    post_start:
      - step_back: {to: implement.code, message: "triage says: start over"}
  - name: pr_ready
    host: controller
  - name: implementation_review
    human_review: true
    on_failure:
      step_back_to: implement.feedback
  - name: accepted
    terminal: completion
  - name: not_doing
    terminal: abandon
    redirect_only: true
    post_start:
      - create_file: {dest: abandoned.md, content: "abandoned"}
flows:
  quick: [backlog, implement.code, accepted]
`

// escalate stops issue id for a person, as the controller does when a
// budget is spent: the escalation, the attempts and an open breaker.
func escalate(t *testing.T, e *engine.Engine, id int) *issues.Issue {
	t.Helper()
	iss, err := e.Store.Get(id)
	require.NoError(t, err)
	iss, err = e.Store.Update(context.Background(), id, iss.Version, func(i *issues.Issue) error {
		i.Escalated = &issues.Escalation{Stage: i.Stage, Reason: "CI failed 5 times", Kind: "budget", At: time.Now().UTC()}
		i.Attempts = map[string]int{"ci_failed": 5}
		i.Breaker = &issues.Breaker{State: issues.BreakerOpen, NoProgress: 3, SameError: 3, Fingerprint: "3f1c0a9be2d4 test-unit"}
		return nil
	})
	require.NoError(t, err)
	return iss
}

func lastEntry(t *testing.T, e *engine.Engine, id int) issues.HistoryEntry {
	t.Helper()
	iss, err := e.Store.Get(id)
	require.NoError(t, err)
	return iss.History[len(iss.History)-1]
}

func exists(e *engine.Engine, id int, name string) bool {
	_, err := os.Stat(filepath.Join(e.Store.Dir(id), name))
	return err == nil
}

// command is one of people's commands, asked of issue id by a.
type command func(e *engine.Engine, id int, a engine.Actor) (*engine.Result, error)

// commands are people's commands, by name, each with what it needs.
var commands = map[string]command{
	"resume": func(e *engine.Engine, id int, a engine.Actor) (*engine.Result, error) {
		return people.Resume(context.Background(), e, id, a, "the runner is back")
	},
	"skip": func(e *engine.Engine, id int, a engine.Actor) (*engine.Result, error) {
		return people.Skip(context.Background(), e, id, a, "CI is broken on main")
	},
	"abort": func(e *engine.Engine, id int, a engine.Actor) (*engine.Result, error) {
		return people.Abort(context.Background(), e, id, a, "duplicate of 2")
	},
	"reject": func(e *engine.Engine, id int, a engine.Actor) (*engine.Result, error) {
		return people.Reject(context.Background(), e, id, a, "", "the login form has no labels")
	},
	"move": func(e *engine.Engine, id int, a engine.Actor) (*engine.Result, error) {
		return people.Move(context.Background(), e, id, a, "implement.code", "start over")
	},
}

func TestPeopleCommandsRefuseEveryoneElse(t *testing.T) {
	container := engine.ActorFromEnv(func(k string) string { return map[string]string{"AGENTTREE_CONTAINER": "1"}[k] })
	for name, run := range commands {
		for _, a := range []engine.Actor{agent, container, controller} {
			t.Run(name+" by "+a.String(), func(t *testing.T) {
				e := newEngine(t, manualPipeline)
				id := create(t, e, "implementation_review").ID
				before := escalate(t, e, id)

				res, err := run(e, id, a)
				require.NoError(t, err)
				assert.Equal(t, engine.StatusWaiting, res.Status)
				assert.Equal(t, "implementation_review", res.To)
				require.Len(t, res.Reasons, 1)
				assert.Contains(t, res.Reasons[0], "only a person can")
				assert.Contains(t, res.Reasons[0], "`agenttree "+name+" 1")
				after, err := e.Store.Get(id)
				require.NoError(t, err)
				assert.Equal(t, before, after, "a refused command changes nothing")

				// The controller reads the Outcome, never the report.
				o := res.Outcome
				assert.Equal(t, engine.StatusWaiting, o.Status)
				assert.Equal(t, "implementation_review", o.From)
				assert.Equal(t, "implementation_review", o.To)
				assert.False(t, o.Moved)
				assert.Equal(t, before.Version, o.Version)
				assert.Equal(t, res.Reasons[0], o.Reason)
				assert.Equal(t, res.Reasons[0], o.Summary)
			})
		}
	}
}

func TestPeopleCommandsResolveAnEscalation(t *testing.T) {
	tests := []struct {
		command string
		to      string
		kind    stages.Move
		reason  string
	}{
		{"resume", "implementation_review", stages.MoveResume, "the runner is back"},
		{"skip", "accepted", stages.MoveSkip, "CI is broken on main"},
		{"abort", "not_doing", stages.MoveAbort, "duplicate of 2"},
		{"reject", "implement.feedback", stages.MoveReject, "the login form has no labels"},
		{"move", "implement.code", stages.MoveManual, "start over"},
	}
	for _, tt := range tests {
		t.Run(tt.command, func(t *testing.T) {
			e := newEngine(t, manualPipeline)
			id := create(t, e, "implementation_review").ID
			before := escalate(t, e, id)

			res, err := commands[tt.command](e, id, human)
			require.NoError(t, err)
			assert.Equal(t, engine.StatusAdvanced, res.Status, res.Reasons)
			assert.Equal(t, "implementation_review", res.From)
			assert.Equal(t, tt.to, res.To)
			assert.Equal(t, tt.kind, res.Kind)
			assert.Equal(t, []string{tt.reason}, res.Reasons)

			got, err := e.Store.Get(id)
			require.NoError(t, err)
			assert.Equal(t, tt.to, got.Stage)
			assert.Nil(t, got.Escalated)
			assert.Len(t, got.History, len(before.History)+1, "one move")
			assert.Equal(t, got.Version, res.Version)
			last := got.History[len(got.History)-1]
			assert.Equal(t, issues.HistoryEntry{From: "implementation_review", To: tt.to, Kind: tt.kind, Actor: "human", Reason: tt.reason, At: last.At}, last)
			if tt.kind == stages.MoveResume {
				assert.Nil(t, got.Attempts, "resume resets the budgets")
				assert.Nil(t, got.Breaker, "and the breaker")
			} else {
				assert.Equal(t, before.Attempts, got.Attempts)
			}
		})
	}
}

func TestResumedIssueMovesAgain(t *testing.T) {
	e := newEngine(t, manualPipeline)
	id := create(t, e, "pr_ready").ID
	escalate(t, e, id)

	res := next(t, e, id, controller)
	require.Equal(t, engine.StatusEscalated, res.Status, "an escalated issue stops")
	assert.Contains(t, res.Reasons[0], "`agenttree resume 1 --reason TEXT`")

	res, err := people.Resume(context.Background(), e, id, human, "the flaky test is fixed")
	require.NoError(t, err)
	assert.Equal(t, []string{"pr_ready", "pr_ready", "advanced"}, []string{res.From, res.To, string(res.Status)})
	assert.Contains(t, res.Instructions, "`agenttree controller` takes the issue up again")

	res = next(t, e, id, controller)
	assert.Equal(t, engine.StatusAdvanced, res.Status, res.Reasons)
	assert.Equal(t, "implementation_review", res.To)
}

// A half-open breaker is something a resume clears, escalated or not.
func TestResumeClosesAHalfOpenBreaker(t *testing.T) {
	e := newEngine(t, manualPipeline)
	iss := create(t, e, "pr_ready")
	_, err := e.Store.Update(context.Background(), iss.ID, iss.Version, func(i *issues.Issue) error {
		i.Breaker = &issues.Breaker{State: issues.BreakerHalfOpen, NoProgress: 2, SameError: 1}
		return nil
	})
	require.NoError(t, err)

	res, err := people.Resume(context.Background(), e, iss.ID, human, "the test is fixed on main")
	require.NoError(t, err)
	assert.Equal(t, engine.StatusAdvanced, res.Status)
	got, err := e.Store.Get(iss.ID)
	require.NoError(t, err)
	assert.Nil(t, got.Breaker)
}

func TestResumeSaysWhoGoesOn(t *testing.T) {
	tests := []struct {
		stage   string
		pending bool // the stage's entry work did not finish
		want    string
	}{
		{stage: "pr_ready", want: "`agenttree controller` takes the issue up again"},
		{stage: "not_doing", pending: true, want: "The entry work of not_doing did not finish"},
		{stage: "implementation_review", want: "waits for a person"},
	}
	for _, tt := range tests {
		t.Run(tt.stage, func(t *testing.T) {
			e := newEngine(t, manualPipeline)
			iss := escalate(t, e, create(t, e, tt.stage).ID)
			if tt.pending {
				_, err := e.Store.Update(context.Background(), iss.ID, iss.Version, func(i *issues.Issue) error {
					i.EntryPending = &issues.EntryPending{Stage: tt.stage, Failures: []string{"close_pr: the forge is down"}}
					return nil
				})
				require.NoError(t, err)
			}
			res, err := people.Resume(context.Background(), e, iss.ID, human, "the forge is up")
			require.NoError(t, err)
			assert.Contains(t, res.Instructions, tt.want)
		})
	}
}

// A resume asks a hook waiting on CI to try again what failed before (a
// flaky check); the other commands do not.
func TestOnlyResumeAsksCIToRunAgain(t *testing.T) {
	for name, run := range commands {
		t.Run(name, func(t *testing.T) {
			e := newEngine(t, manualPipeline)
			id := create(t, e, "implementation_review").ID
			escalate(t, e, id)
			asked := time.Now().UTC()

			_, err := run(e, id, human)
			require.NoError(t, err)

			tx, _, err := e.Store.Begin(context.Background(), id)
			require.NoError(t, err)
			defer tx.Unlock()
			watch, err := tx.Watch()
			require.NoError(t, err)
			resumed, ok := watch[hooks.WatchResumedAt]
			require.Equal(t, name == "resume", ok, "watch state: %v", watch)
			if ok {
				at, err := time.Parse(time.RFC3339Nano, resumed)
				require.NoError(t, err)
				assert.False(t, at.Before(asked), "%s is the time of the resume", resumed)
			}
		})
	}
}

func TestSkipLeavesWithoutTheGates(t *testing.T) {
	e := newEngine(t, manualPipeline)
	id := create(t, e, "implement.feedback").ID
	require.Equal(t, engine.StatusBlocked, next(t, e, id, human).Status, "review.md is missing")

	res, err := people.Skip(context.Background(), e, id, human, "reviewed on a call")
	require.NoError(t, err)
	assert.Equal(t, engine.StatusAdvanced, res.Status, res.Reasons)
	assert.Equal(t, "pr_ready", res.To, "triage is redirect-only: next would not go there either")
	assert.Contains(t, res.Instructions, "host controller")
}

func TestAbortEntersTheAbandonStage(t *testing.T) {
	e := newEngine(t, manualPipeline)
	id := create(t, e, "implement.feedback").ID
	res, err := people.Abort(context.Background(), e, id, human, "duplicate of #12")
	require.NoError(t, err)
	assert.Equal(t, "not_doing", res.To)
	assert.True(t, exists(e, id, "abandoned.md"), "the abandon stage's entry hooks ran")
	assert.Equal(t, "duplicate of #12", lastEntry(t, e, id).Reason)
}

func TestRejectSendsTheWorkBack(t *testing.T) {
	tests := []struct {
		name  string
		stage string
		to    string
		want  string
	}{
		{name: "to the review's step-back target", stage: "implementation_review", want: "implement.feedback"},
		{name: "to the agent's stage before the review", stage: "plan.review", want: "plan.draft"},
		{name: "to the stage named", stage: "implementation_review", to: "implement.code", want: "implement.code"},
		{name: "to a stage named by its stage", stage: "implementation_review", to: "implement", want: "implement.code"},
		{name: "to a substage named from its stage", stage: "plan.review", to: "draft", want: "plan.draft"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEngine(t, manualPipeline)
			id := create(t, e, tt.stage).ID
			res, err := people.Reject(context.Background(), e, id, human, tt.to, "  the login form has no labels\n")
			require.NoError(t, err)
			assert.Equal(t, engine.StatusAdvanced, res.Status, res.Reasons)
			assert.Equal(t, tt.want, res.To)
			assert.Equal(t, stages.MoveReject, res.Kind)
			last := lastEntry(t, e, id)
			assert.Equal(t, "the login form has no labels", last.Reason, "the message is the history entry's reason")
			assert.Equal(t, stages.MoveReject, last.Kind)
			assert.Equal(t, tt.want == "implement.code", exists(e, id, "notes.md"), "entering implement.code runs its entry hooks")
		})
	}
}

func TestFollowsWhereEntryHooksSendTheIssue(t *testing.T) {
	e := newEngine(t, manualPipeline)
	id := create(t, e, "implementation_review").ID
	res, err := people.Move(context.Background(), e, id, human, "triage", "needs triage")
	require.NoError(t, err)
	assert.Equal(t, "implement.code", res.To)
	assert.Equal(t, []string{"needs triage", "triage says: start over"}, res.Reasons)
	assert.True(t, exists(e, id, "notes.md"))

	got, err := e.Store.Get(id)
	require.NoError(t, err)
	var moves []string
	for _, h := range got.History[1:] {
		moves = append(moves, string(h.Kind)+":"+h.From+"→"+h.To)
	}
	assert.Equal(t, []string{"move:implementation_review→triage", "step_back:triage→implement.code"}, moves)
}

func TestMoveLeavesAStageTheConfigNoLongerHas(t *testing.T) {
	e := newEngine(t, manualPipeline)
	iss := create(t, e, "implement.code")
	_, err := e.Store.Update(context.Background(), iss.ID, iss.Version, func(i *issues.Issue) error {
		i.Stage = "qa"
		return nil
	})
	require.NoError(t, err)
	_, err = people.Skip(context.Background(), e, iss.ID, human, "qa is gone")
	require.ErrorContains(t, err, "move the issue")

	res, err := people.Move(context.Background(), e, iss.ID, human, "implement.feedback", "qa is gone")
	require.NoError(t, err)
	assert.Equal(t, []string{"qa", "implement.feedback"}, []string{res.From, res.To})
}

func TestPeopleCommandsSayWhatIsWrong(t *testing.T) {
	tests := []struct {
		name  string
		stage string
		flow  string
		run   func(e *engine.Engine, id int) (*engine.Result, error)
		want  []string
	}{
		{name: "skip without a reason", stage: "pr_ready",
			run: func(e *engine.Engine, id int) (*engine.Result, error) {
				return people.Skip(context.Background(), e, id, human, " ")
			},
			want: []string{"skip needs a reason", "`agenttree skip 1 --reason TEXT`"}},
		{name: "skip at a terminal stage", stage: "accepted",
			run: func(e *engine.Engine, id int) (*engine.Result, error) {
				return people.Skip(context.Background(), e, id, human, "done")
			},
			want: []string{"terminal stage", "agenttree move 1"}},
		{name: "abort in a flow without an abandon stage", stage: "implement.code", flow: "quick",
			run: func(e *engine.Engine, id int) (*engine.Result, error) {
				return people.Abort(context.Background(), e, id, human, "no longer wanted")
			},
			want: []string{`flow "quick" has no stage for abandoned issues`, "terminal: abandon"}},
		{name: "abort an abandoned issue", stage: "not_doing",
			run: func(e *engine.Engine, id int) (*engine.Result, error) {
				return people.Abort(context.Background(), e, id, human, "no longer wanted")
			},
			want: []string{"already at not_doing"}},
		{name: "resume without a reason", stage: "pr_ready",
			run: func(e *engine.Engine, id int) (*engine.Result, error) {
				return people.Resume(context.Background(), e, id, human, " ")
			},
			want: []string{"resume needs a reason (--reason: what was put right)", "`agenttree resume 1 --reason TEXT`"}},
		{name: "abort without a reason", stage: "pr_ready",
			run: func(e *engine.Engine, id int) (*engine.Result, error) {
				return people.Abort(context.Background(), e, id, human, "")
			},
			want: []string{"abort needs a reason (--reason)", "`agenttree abort 1 --reason TEXT`"}},
		{name: "reject outside a review", stage: "implement.code",
			run: func(e *engine.Engine, id int) (*engine.Result, error) {
				return people.Reject(context.Background(), e, id, human, "", "no")
			},
			want: []string{engine.ErrNotReview.Error(), "agenttree move 1"}},
		{name: "reject without a message", stage: "implementation_review",
			run: func(e *engine.Engine, id int) (*engine.Result, error) {
				return people.Reject(context.Background(), e, id, human, "", "")
			},
			want: []string{"reject needs a message for the agent (--message)"}},
		{name: "reject forward", stage: "plan.review",
			run: func(e *engine.Engine, id int) (*engine.Result, error) {
				return people.Reject(context.Background(), e, id, human, "accepted", "no")
			},
			want: []string{"accepted does not come before plan.review"}},
		{name: "reject with no agent stage before", stage: "plan.review", flow: "review_first",
			run: func(e *engine.Engine, id int) (*engine.Result, error) {
				return people.Reject(context.Background(), e, id, human, "", "no")
			},
			want: []string{"no stage before plan.review", "--to STAGE"}},
		{name: "move to a typo", stage: "implementation_review",
			run: func(e *engine.Engine, id int) (*engine.Result, error) {
				return people.Move(context.Background(), e, id, human, "implemnt.code", "again")
			},
			want: []string{`has no stage "implemnt.code"`, "did you mean `implement.code`?", "its stages: backlog, plan.draft"}},
		{name: "move to a typo of a stage", stage: "implementation_review",
			run: func(e *engine.Engine, id int) (*engine.Result, error) {
				return people.Move(context.Background(), e, id, human, "implemnt", "again")
			},
			want: []string{"did you mean `implement`?"}},
		{name: "move out of the issue's flow", stage: "implement.code", flow: "quick",
			run: func(e *engine.Engine, id int) (*engine.Result, error) {
				return people.Move(context.Background(), e, id, human, "pr_ready", "again")
			},
			want: []string{`pr_ready is not a stage of flow "quick"`}},
		{name: "move where the issue is", stage: "pr_ready",
			run: func(e *engine.Engine, id int) (*engine.Result, error) {
				return people.Move(context.Background(), e, id, human, "pr_ready", "again")
			},
			want: []string{"already at pr_ready", "agenttree resume 1"}},
		{name: "move without a reason", stage: "pr_ready",
			run: func(e *engine.Engine, id int) (*engine.Result, error) {
				return people.Move(context.Background(), e, id, human, "implement.code", "")
			},
			want: []string{"move needs a reason", "`agenttree move 1 implement.code --reason TEXT`"}},
		{name: "resume an issue that is not escalated", stage: "implement.code",
			run: func(e *engine.Engine, id int) (*engine.Result, error) {
				return people.Resume(context.Background(), e, id, human, "x")
			},
			want: []string{"issue 1 is not escalated and its circuit breaker is closed, so there is nothing to resume; it is at implement.code",
				"`agenttree status 1` says what it waits on"}},
		{name: "an issue that does not exist", stage: "pr_ready",
			run: func(e *engine.Engine, id int) (*engine.Result, error) {
				return people.Resume(context.Background(), e, 42, human, "fixed")
			},
			want: []string{"issue 42", "not found"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEngine(t, manualPipeline+"  review_first: [plan.review, accepted]\n")
			iss, err := e.Create(context.Background(), engine.NewIssue{Title: "Add login page", Flow: tt.flow, Stage: tt.stage})
			require.NoError(t, err)
			_, err = tt.run(e, iss.ID)
			require.Error(t, err)
			for _, w := range tt.want {
				assert.Contains(t, err.Error(), w)
			}
			got, err := e.Store.Get(iss.ID)
			require.NoError(t, err)
			assert.Equal(t, iss, got, "nothing is written")
		})
	}
}
