package main

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/internal/testpipeline"
)

// byHand runs people's commands against w's config, as a user runs them.
func (w *workspace) byHand(t *testing.T, env map[string]string, args ...string) cliResult {
	t.Helper()
	return w.run(t, env, args...)
}

// escalate stops issue id for a person, as the controller does when a
// budget is spent.
func (w *workspace) escalate(t *testing.T, id int) {
	t.Helper()
	store, err := issues.Open(filepath.Join(w.dir, "_agenttree"))
	require.NoError(t, err)
	iss, err := store.Get(id)
	require.NoError(t, err)
	_, err = store.Update(context.Background(), id, iss.Version, func(i *issues.Issue) error {
		i.Escalated = &issues.Escalation{Stage: i.Stage, Reason: "CI failed 5 times", Kind: "budget", At: time.Now().UTC()}
		i.Attempts = map[string]int{"ci_failed": 5}
		i.Breaker = &issues.Breaker{State: issues.BreakerOpen, NoProgress: 3, SameError: 3}
		return nil
	})
	require.NoError(t, err)
}

// peopleCommands are each of people's commands, on an escalated issue at
// implementation_review, with where each leaves it.
var peopleCommands = []struct {
	args   []string
	to     string
	kind   string
	reason string
}{
	{[]string{"resume", "1", "--reason", "the runner is back"}, "implementation_review", "resume", "the runner is back"},
	{[]string{"skip", "1", "--reason", "reviewed on a call"}, "accepted", "skip", "reviewed on a call"},
	{[]string{"abort", "1", "--reason", "duplicate of #12"}, "not_doing", "abort", "duplicate of #12"},
	{[]string{"reject", "1", "--to", "implement.code", "--message", "the form has no labels"}, "implement.code", "reject", "the form has no labels"},
	{[]string{"move", "1", "implement.feedback", "--reason", "redo the review"}, "implement.feedback", "move", "redo the review"},
}

func TestPeopleCommandsForAPerson(t *testing.T) {
	for _, tt := range peopleCommands {
		t.Run(tt.args[0], func(t *testing.T) {
			w := newWorkspace(t, testpipeline.Read(t, "cli"))
			id := w.create(t, "Add login page", "--stage", "implementation_review")
			w.escalate(t, id)

			r := w.byHand(t, humanEnv, append(tt.args, "--json")...)
			require.Equal(t, 0, r.code, "stdout %s stderr %s", r.stdout, r.stderr)
			res := decodeNext(t, r.stdout)
			assert.Equal(t, "advanced", res.Status)
			assert.Equal(t, []string{"implementation_review", tt.to, tt.kind}, []string{res.From, res.To, res.Kind})

			after := w.issue(t, id)
			assert.Equal(t, tt.to, after.Stage)
			assert.Nil(t, after.Escalated, "the escalation is resolved")
			last := after.History[len(after.History)-1]
			assert.Equal(t, issues.HistoryEntry{From: "implementation_review", To: tt.to, Kind: last.Kind, Actor: "human", Reason: tt.reason, At: last.At}, last)
			assert.EqualValues(t, tt.kind, last.Kind)
		})
	}
}

func TestPeopleCommandsRefuseAgentsAndTheController(t *testing.T) {
	for _, tt := range peopleCommands {
		for name, env := range map[string]map[string]string{"agent": agentEnv, "container": containerEnv, "controller": controlEnv} {
			t.Run(tt.args[0]+" by "+name, func(t *testing.T) {
				w := newWorkspace(t, testpipeline.Read(t, "cli"))
				id := w.create(t, "Add login page", "--stage", "implementation_review")
				w.escalate(t, id)
				before := w.issue(t, id)

				r := w.byHand(t, env, append(tt.args, "--json")...)
				require.Equal(t, exitWaiting, r.code, "stdout %s stderr %s", r.stdout, r.stderr)
				res := decodeNext(t, r.stdout)
				assert.Equal(t, "waiting", res.Status)
				require.Len(t, res.Reasons, 1)
				assert.Contains(t, res.Reasons[0], "only a person can")
				assert.Equal(t, before, w.issue(t, id), "a refused command changes nothing")

				r = w.byHand(t, env, tt.args...)
				assert.Equal(t, exitWaiting, r.code)
				assert.Contains(t, r.stdout, "issue 1 is waiting at implementation_review: only a person can")
				assert.Contains(t, r.stdout, "ask a person to run `agenttree "+tt.args[0]+" 1")
			})
		}
	}
}

func TestPeopleCommandsText(t *testing.T) {
	tests := []struct {
		args []string
		want []string
	}{
		{[]string{"resume", "1", "--reason", "the flaky test is fixed"},
			[]string{"issue 1 resumed at implementation_review\n  the flaky test is fixed\n", "waits for a person"}},
		{[]string{"abort", "1", "--reason", "duplicate of 2"},
			[]string{"issue 1 moved implementation_review → not_doing (abort)\n  duplicate of 2\n", "end of the flow"}},
		{[]string{"reject", "1", "--message", "the form has no labels"},
			[]string{"issue 1 moved implementation_review → security (reject)\n  the form has no labels\n"}},
	}
	for _, tt := range tests {
		t.Run(tt.args[0], func(t *testing.T) {
			w := newWorkspace(t, testpipeline.Read(t, "cli"))
			w.escalate(t, w.create(t, "Add login page", "--stage", "implementation_review"))
			r := w.byHand(t, humanEnv, tt.args...)
			require.Equal(t, 0, r.code, "stdout %s stderr %s", r.stdout, r.stderr)
			for _, want := range tt.want {
				assert.Contains(t, r.stdout, want)
			}
		})
	}
}

func TestPeopleCommandsBadUsage(t *testing.T) {
	tests := []struct {
		name        string
		stage, flow string
		args        []string
		want        string
	}{
		{"move to a typo", "implementation_review", "", []string{"move", "1", "implemnt.code", "--reason", "again"}, "did you mean `implement.code`?"},
		{"move without a stage", "implementation_review", "", []string{"move", "1", "--reason", "again"}, "agenttree move needs STAGE"},
		{"move without a reason", "implementation_review", "", []string{"move", "1", "implement.code"}, "`agenttree move 1 implement.code --reason TEXT`"},
		{"skip without a reason", "implementation_review", "", []string{"skip", "1"}, "skip needs a reason (--reason)"},
		{"resume without a reason", "implementation_review", "", []string{"resume", "1"}, "resume needs a reason (--reason: what was put right), kept in the issue's history: `agenttree resume 1 --reason TEXT`"},
		{"abort without a reason", "implementation_review", "", []string{"abort", "1"}, "abort needs a reason (--reason), kept in the issue's history: `agenttree abort 1 --reason TEXT`"},
		{"reject without a message", "implementation_review", "", []string{"reject", "1"}, "reject needs a message for the agent (--message)"},
		{"reject outside a review", "implement.code", "", []string{"reject", "1", "--message", "no"}, "not at a human review"},
		{"abort in a flow without an abandon stage", "implement.code", "quick", []string{"abort", "1", "--reason", "dropped"}, "has no stage for abandoned issues"},
		{"an issue that does not exist", "implementation_review", "", []string{"resume", "42", "--reason", "fixed"}, "issue 42: issue not found"},
		{"resume an issue that is not escalated", "implement.code", "", []string{"resume", "1", "--reason", "x"},
			"error: issue 1 is not escalated and its circuit breaker is closed, so there is nothing to resume; it is at implement.code: `agenttree status 1` says what it waits on"},
		{"not an issue id", "implementation_review", "", []string{"abort", "x", "--reason", "dropped"}, `"x" is not an issue id`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorkspace(t, testpipeline.Read(t, "cli"))
			args := []string{"--stage", tt.stage}
			if tt.flow != "" {
				args = append(args, "--flow", tt.flow)
			}
			id := w.create(t, "Add login page", args...)
			before := w.issue(t, id)
			r := w.byHand(t, humanEnv, tt.args...)
			assert.Equal(t, exitUsage, r.code, "stdout %s stderr %s", r.stdout, r.stderr)
			assert.Contains(t, r.stderr, tt.want)
			assert.Equal(t, before, w.issue(t, id))
		})
	}
}
