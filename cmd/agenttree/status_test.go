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

	"github.com/agenttree/agenttree/cmd/agenttree/statuscmd"
	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/internal/testpipeline"
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
		"`agenttree resume 3 --reason TEXT`", "`agenttree skip 3 --reason TEXT`", "`agenttree abort 3 --reason TEXT`", "`agenttree move 3 STAGE --reason TEXT`",
	} {
		assert.Contains(t, escalated, want)
	}
	assert.NotContains(t, table, "Checkout", "an escalated issue is listed once, first")
	assert.Regexp(t, `1\s+plan.review\s+human review\s+waiting for human review, for \d+s\s+implement.code\s+Add login page`, table)
	assert.Regexp(t, "2\\s+implement.code\\s+agent: developer\\s+no developer agent is running: start one with `agenttree start 2`, for \\d+s\\s+implement.feedback\\s+Fix logout", table)

	r = w.run(t, humanEnv, "status", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	var rows []statuscmd.Row
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &rows), r.stdout)
	require.Len(t, rows, 3)
	assert.Equal(t, []int{3, 1, 2}, []int{rows[0].ID, rows[1].ID, rows[2].ID}, "escalated first, then by stage")
	first := rows[0]
	require.NotNil(t, first.Escalated)
	assert.Equal(t, "CI failed 5 times", first.Escalated.Reason)
	assert.Equal(t, "escalated: CI failed 5 times", first.WaitingOn)
	assert.Equal(t, statuscmd.WaiterPerson, first.WaitingFor)
	assert.Equal(t, map[string]int{"ci_failed": 5}, first.Attempts)
	require.NotNil(t, first.Breaker)
	assert.Equal(t, issues.BreakerOpen, first.Breaker.State)
	assert.Equal(t, statuscmd.ResolveCommands(3), first.Resolve)
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
	var rows []statuscmd.Row
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &rows), r.stdout)
	require.Len(t, rows, 2)
	assert.Equal(t, 2, rows[0].ID)
	assert.Equal(t, 1, rows[1].ID, "unreadable issues come last")
	assert.NotEmpty(t, rows[1].Error)
	assert.Equal(t, statuscmd.WaiterPerson, rows[1].WaitingFor)

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
	var rows []statuscmd.Row
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &rows), r.stdout)
	require.Len(t, rows, 2)
	assert.Equal(t, long, rows[0].Title, "--json gives programs the text as stored")
	assert.Equal(t, reason, rows[0].Escalated.Reason)
	assert.Equal(t, hostile, rows[1].Title)
	assert.Equal(t, hostile, w.statusBlockOf(t, plain).Title)
}
