package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/internal/testpipeline"
	"github.com/agenttree/agenttree/stages"
	"github.com/agenttree/agenttree/stages/load"
)

// store opens w's state directory, to write what the engine and the
// controller write.
func (w *workspace) store(t *testing.T) *issues.Store {
	t.Helper()
	store, err := issues.Open(filepath.Join(w.dir, "_agenttree"))
	require.NoError(t, err)
	return store
}

// change rewrites issue id through the store, as the engine does.
func (w *workspace) change(t *testing.T, id int, fn func(*issues.Issue)) {
	t.Helper()
	store := w.store(t)
	iss, err := store.Get(id)
	require.NoError(t, err)
	_, err = store.Update(context.Background(), id, iss.Version, func(i *issues.Issue) error {
		fn(i)
		return nil
	})
	require.NoError(t, err)
}

// setPoll writes the controller's polling state of issue id.
func (w *workspace) setPoll(t *testing.T, id int, p *issues.Poll) {
	t.Helper()
	tx, err := w.store(t).Lock(context.Background(), id)
	require.NoError(t, err)
	defer tx.Unlock()
	require.NoError(t, tx.SetPoll(p))
}

// atPRReady puts issue id at pr_ready with PR #1, its entry work under
// way, as the controller leaves it while it waits for CI.
func atPRReady(iss *issues.Issue) {
	iss.Stage, iss.PRNumber = "pr_ready", 1
	iss.EntryPending = &issues.EntryPending{Stage: "pr_ready", From: "implement.feedback", Done: 1}
}

func TestStatusJSONSaysWhatEachIssueWaitsOn(t *testing.T) {
	w := newWorkspace(t, testpipeline.Read(t, "cli"))
	w.create(t, "Add login page", "--stage", "plan.review")
	w.create(t, "Fix logout", "--stage", "accepted")
	r := w.run(t, humanEnv, "status", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	assert.JSONEq(t, `[
		{"id": 1, "title": "Add login page", "stage": "plan.review", "owner": "human review", "next": "implement.code",
		 "waiting_on": "waiting for human review", "waiting_for": "person"},
		{"id": 2, "title": "Fix logout", "stage": "accepted", "owner": "terminal: completion", "next": "",
		 "waiting_on": "done", "waiting_for": "nobody"}
	]`, r.stdout)
}

func TestStatusListsEscalatedIssuesFirst(t *testing.T) {
	w := newWorkspace(t, testpipeline.Read(t, "cli"))
	w.create(t, "Add login page", "--stage", "plan.review")
	w.create(t, "Fix logout", "--stage", "implement.code")
	w.create(t, "Checkout", "--stage", "implementation_review")
	w.escalate(t, 3)

	r := w.run(t, humanEnv, "status")
	require.Equal(t, 0, r.code, r.stderr)
	escalated, table, ok := strings.Cut(r.stdout, "ID  ")
	require.True(t, ok, "a table follows the escalated issues:\n%s", r.stdout)
	for _, want := range []string{
		"ESCALATED: 1 waiting for a person", "#3 Checkout, at implementation_review", "why:      CI failed 5 times",
		"attempts: ci_failed 5", "breaker:  open (no progress 3, same error 3)",
		"`agenttree resume 3`", "`agenttree skip 3 --reason TEXT`", "`agenttree abort 3`", "`agenttree move 3 STAGE --reason TEXT`",
	} {
		assert.Contains(t, escalated, want)
	}
	assert.NotContains(t, table, "Checkout", "an escalated issue is listed once, first")
	assert.Regexp(t, `1\s+plan.review\s+human review\s+waiting for human review, for \d+s\s+implement.code\s+Add login page`, table)
	assert.Regexp(t, `2\s+implement.code\s+agent: developer\s+agent working \(developer\), for \d+s\s+implement.feedback\s+Fix logout`, table)

	r = w.run(t, humanEnv, "status", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	var rows []statusRow
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &rows), r.stdout)
	require.Len(t, rows, 3)
	assert.Equal(t, []int{3, 1, 2}, []int{rows[0].ID, rows[1].ID, rows[2].ID}, "escalated first, then by stage")
	first := rows[0]
	require.NotNil(t, first.Escalated)
	assert.Equal(t, "CI failed 5 times", first.Escalated.Reason)
	assert.Equal(t, "escalated: CI failed 5 times", first.WaitingOn)
	assert.Equal(t, waiterPerson, first.WaitingFor)
	assert.Equal(t, map[string]int{"ci_failed": 5}, first.Attempts)
	require.NotNil(t, first.Breaker)
	assert.Equal(t, issues.BreakerOpen, first.Breaker.State)
	assert.Equal(t, resolveCommands(3), first.Resolve)
	assert.Nil(t, rows[1].Escalated)
	assert.Empty(t, rows[1].Resolve)
}

func TestStatusShowsAnUnreadableIssueAndTheOthers(t *testing.T) {
	w := newWorkspace(t, testpipeline.Read(t, "cli"))
	w.create(t, "Broken", "--stage", "plan.review")
	w.create(t, "Fine", "--stage", "implement.code")
	require.NoError(t, os.WriteFile(filepath.Join(w.hostDir(1), "issue.yaml"), []byte("id: [1\n"), 0o644))

	r := w.run(t, humanEnv, "status")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Regexp(t, `2\s+implement.code\s+agent: developer`, r.stdout)
	assert.Regexp(t, `1\s+\?\s+a person: its state is damaged \(.agenttree verify 1., .agenttree repair 1.\)`, r.stdout)
	assert.Contains(t, r.stdout, "issue 1: ", "the error is printed under the table")

	r = w.run(t, humanEnv, "status", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	var rows []statusRow
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &rows), r.stdout)
	require.Len(t, rows, 2)
	assert.Equal(t, 2, rows[0].ID)
	assert.Equal(t, 1, rows[1].ID, "unreadable issues come last")
	assert.NotEmpty(t, rows[1].Error)
	assert.Equal(t, waiterPerson, rows[1].WaitingFor)

	// The way out it names works: the issue is restored from its log.
	r = w.run(t, humanEnv, "repair", "1")
	require.Equal(t, 0, r.code, "stdout %s stderr %s", r.stdout, r.stderr)
	r = w.run(t, humanEnv, "status")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Regexp(t, `1\s+plan.review`, r.stdout)
}

func TestStatusShowsTheControllersPoll(t *testing.T) {
	w := newWorkspace(t, testpipeline.Read(t, "controller"))
	id := w.create(t, "Add checkout page", "--stage", "implement.feedback")
	w.change(t, id, atPRReady)
	now := time.Now().UTC()
	poll := &issues.Poll{PR: 1, Head: "abc123def4567890", Status: "3 of 7 checks still running on abc123def456",
		Started: now.Add(-5 * time.Minute), PushedAt: now.Add(-2 * time.Minute), Iteration: 4, IntervalS: 30, NextAt: now.Add(30 * time.Second)}
	w.setPoll(t, id, poll)

	r := w.run(t, humanEnv, "status")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Regexp(t, `pr_ready \(unfinished\)\s+controller\s+controller: 3 of 7 checks still running on abc123def456, for 2m\d+s`, r.stdout)
	assert.NotContains(t, r.stdout, "is `agenttree controller` running?")

	// The controller stopped looking: status says so.
	poll.NextAt = now.Add(-10 * time.Minute)
	w.setPoll(t, id, poll)
	r = w.run(t, humanEnv, "status")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Regexp(t, `the controller is 10m\d+s late \(is `+"`agenttree controller`"+` running\?\)`, r.stdout)
}

// loadPipeline loads testdata/pipelines/NAME.yaml.
func loadPipeline(t *testing.T, name string) *stages.Config {
	t.Helper()
	cfg, err := load.File(testpipeline.Path(t, name), hookRegistry())
	require.NoError(t, err)
	return cfg
}

func TestStatusWaitingOn(t *testing.T) {
	cfg := loadPipeline(t, "controller")
	at := time.Date(2025, 3, 1, 10, 0, 0, 0, time.UTC)
	history := func(h ...issues.HistoryEntry) []issues.HistoryEntry {
		return append([]issues.HistoryEntry{{To: "implement.code", Kind: issues.KindCreate, Actor: "human", At: at}}, h...)
	}
	poll := &issues.Poll{PR: 1, Status: "3 of 7 checks still running on abc123def456", PushedAt: at.Add(time.Hour), NextAt: at.Add(2 * time.Hour)}
	tests := []struct {
		name string
		iss  issues.Issue
		poll *issues.Poll
		who  waiter
		what string
		run  []string
	}{
		{
			name: "CI running at a controller stage",
			iss:  issues.Issue{ID: 1, Stage: "pr_ready", PRNumber: 1, EntryPending: &issues.EntryPending{Stage: "pr_ready", Done: 1}},
			poll: poll,
			who:  waiterController, what: "controller: 3 of 7 checks still running on abc123def456",
			run: []string{"agenttree controller", "agenttree next -i 1"},
		},
		{
			name: "the poll of a PR the issue no longer has",
			iss:  issues.Issue{ID: 1, Stage: "pr_ready", PRNumber: 2, EntryPending: &issues.EntryPending{Stage: "pr_ready"}},
			poll: poll,
			who:  waiterController, what: "controller: the entry work of pr_ready has not run yet",
			run: []string{"agenttree controller", "agenttree next -i 1"},
		},
		{
			name: "a controller stage not looked at",
			iss:  issues.Issue{ID: 1, Stage: "pr_ready"},
			who:  waiterController, what: "controller: not looked at yet",
			run: []string{"agenttree controller", "agenttree next -i 1"},
		},
		{
			name: "a refused merge at a terminal stage is not done",
			iss:  issues.Issue{ID: 1, Stage: "accepted", EntryPending: &issues.EntryPending{Stage: "accepted", Failures: []string{"merge_pr: PR #1 conflicts with main\nmore"}}},
			who:  waiterController, what: "controller: the entry work of accepted failed and is retried: merge_pr: PR #1 conflicts with main",
			run: []string{"agenttree controller", "agenttree next -i 1"},
		},
		{name: "done", iss: issues.Issue{ID: 1, Stage: "accepted"}, who: waiterNobody, what: "done"},
		{name: "abandoned", iss: issues.Issue{ID: 1, Stage: "not_doing"}, who: waiterNobody, what: "abandoned"},
		{
			name: "an agent at work",
			iss:  issues.Issue{ID: 1, Stage: "implement.code", History: history()},
			who:  waiterAgent, what: "agent working (developer)", run: []string{"agenttree next"},
		},
		{
			name: "an agent after a step back",
			iss: issues.Issue{ID: 1, Stage: "implement.feedback", History: history(issues.HistoryEntry{
				From: "pr_ready", To: "implement.feedback", Kind: stages.MoveStepBack, Actor: "controller", Reason: "CI failed on abc: test-unit\nlog", At: at})},
			who: waiterAgent, what: "agent working (developer) after a step back: CI failed on abc: test-unit", run: []string{"agenttree next"},
		},
		{
			name: "an agent after a rejection",
			iss: issues.Issue{ID: 1, Stage: "implement.feedback", History: history(issues.HistoryEntry{
				From: "implementation_review", To: "implement.feedback", Kind: stages.MoveReject, Actor: "human", Reason: "labels", At: at})},
			who: waiterAgent, what: "agent working (developer) after a reviewer sent it back: labels", run: []string{"agenttree next"},
		},
		{
			name: "a human review",
			iss:  issues.Issue{ID: 4, Stage: "implementation_review"},
			who:  waiterPerson, what: "waiting for human review",
			run: []string{"agenttree approve 4", "agenttree reject 4 --message TEXT"},
		},
		{
			name: "parked", iss: issues.Issue{ID: 1, Stage: "backlog"},
			who: waiterPerson, what: "parked until a person starts it", run: []string{"agenttree next -i 1"},
		},
		{
			name: "a stage the config lost", iss: issues.Issue{ID: 1, Stage: "qa"},
			who: waiterPerson, what: "a person: stage qa is not in the config", run: []string{"agenttree move 1 STAGE --reason TEXT"},
		},
		{
			name: "escalated",
			iss:  issues.Issue{ID: 1, Stage: "pr_ready", Escalated: &issues.Escalation{Stage: "pr_ready", Kind: "breaker", Reason: "circuit breaker open: same failure 3 times\nlast: x"}},
			who:  waiterPerson, what: "escalated: circuit breaker open: same failure 3 times", run: resolveCommands(1),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := waitingOn(cfg, &tt.iss, tt.poll)
			assert.Equal(t, tt.who, got.who)
			assert.Equal(t, tt.what, got.what)
			assert.Equal(t, tt.run, got.run)
		})
	}
}

func TestStatusWaitingText(t *testing.T) {
	at := time.Date(2025, 3, 1, 10, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		w    waiting
		want string
	}{
		{"no clock", waiting{what: "done"}, "done"},
		{"for how long", waiting{what: "waiting for human review", since: at.Add(-130 * time.Second)}, "waiting for human review, for 2m10s"},
		{"hours in minutes", waiting{what: "agent working (developer)", since: at.Add(-3*time.Hour - 125*time.Second)}, "agent working (developer), for 3h2m"},
		{"an hour, almost", waiting{what: "agent working (developer)", since: at.Add(-time.Hour + time.Millisecond)}, "agent working (developer), for 1h0m"},
		{"a look due soon", waiting{what: "controller: polling", nextLook: at.Add(-time.Minute)}, "controller: polling"},
		{
			"a look long overdue", waiting{what: "controller: polling", nextLook: at.Add(-10 * time.Minute)},
			"controller: polling; the controller is 10m0s late (is `agenttree controller` running?)",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.w.text(at))
		})
	}
}

func TestStatusBlockNeedsAnIssue(t *testing.T) {
	w := newWorkspace(t, testpipeline.Read(t, "cli"))
	r := w.run(t, humanEnv, "status", "--block")
	assert.Equal(t, exitUsage, r.code)
	assert.Contains(t, r.stderr, "agenttree status ID --block")
}

// setTitle stores a title as an issue made before titles were checked
// has it (an edit by hand now reads as tampering).
func (w *workspace) setTitle(t *testing.T, id int, title string) {
	t.Helper()
	w.change(t, id, func(iss *issues.Issue) { iss.Title = title })
}

// Stored text is shown without anything a terminal would act on (an
// escape sequence, a bidi override), on one line, bounded; --json keeps
// it as stored.
func TestStatusShowsStoredTextSafely(t *testing.T) {
	const hostile = "Fix \x1b]0;pwned\x07 login\u202e page\nsecond line"
	const shown = "Fix login page second line"
	long := "Checkout " + strings.Repeat("x", 250)
	clipped := long[:engine.MaxTitleLen-1] + "…"
	const reason = "CI failed\x1b[2J: \x1b]52;c;cm0gLXJmIH4=\x07see\nthe log"

	w := newWorkspace(t, testpipeline.Read(t, "cli"))
	plain := w.create(t, "Add login page", "--stage", "implement.code")
	escalated := w.create(t, "Checkout", "--stage", "implementation_review")
	w.change(t, escalated, func(iss *issues.Issue) {
		iss.Escalated = &issues.Escalation{Stage: iss.Stage, Kind: issues.EscalatedHook, Reason: reason, At: time.Now()}
	})
	w.setTitle(t, plain, hostile)
	w.setTitle(t, escalated, long)

	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"status", []string{"status"}, []string{
			"#2 " + clipped + ", at implementation_review", "why:      CI failed: see the log",
			"1   implement.code",
			shown,
		}},
		{"status block", []string{"status", itoa(escalated), "--block"}, []string{
			"issue 2: " + clipped + "\n",
			"waiting on:  escalated: CI failed: see, for",
			"escalated:   hook, ",
			": CI failed: see the log\n",
		}},
		{"status block of the hand-edited title", []string{"status", itoa(plain), "--block"}, []string{"issue 1: " + shown + "\n"}},
		{"watch", []string{"watch", itoa(escalated), "--until-done", "--interval", "10ms"}, []string{
			"issue 2 (" + clipped + ") at implementation_review: escalated: CI failed: see\n",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := w.run(t, humanEnv, tt.args...)
			require.Equal(t, exitOK, r.code, r.stderr)
			for _, want := range tt.want {
				assert.Contains(t, r.stdout, want)
			}
			assert.NotContains(t, r.stdout, "\x1b")
			assert.NotContains(t, r.stdout, "\a")
			assert.NotContains(t, r.stdout, "\u202e")
			assert.NotContains(t, r.stdout, "pwned")
			assert.NotContains(t, r.stdout, "page\nsecond", "the title's newline is folded")
			assert.NotContains(t, r.stdout, long, "a title is shown at most %d characters long", engine.MaxTitleLen)
		})
	}

	r := w.run(t, humanEnv, "status", "--json")
	require.Equal(t, exitOK, r.code, r.stderr)
	var rows []statusRow
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &rows), r.stdout)
	require.Len(t, rows, 2)
	assert.Equal(t, long, rows[0].Title, "--json gives programs the text as stored")
	assert.Equal(t, reason, rows[0].Escalated.Reason)
	assert.Equal(t, hostile, rows[1].Title)
	assert.Equal(t, hostile, w.statusBlockOf(t, plain).Title)
}
