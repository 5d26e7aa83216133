package main

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/cmd/agenttree/statuscmd"
	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/engine/outbox"
	"github.com/agenttree/agenttree/internal/gittest"
	"github.com/agenttree/agenttree/internal/testpipeline"
	"github.com/agenttree/agenttree/stages"
)

// statusBlockOf runs `status ID --block --json` and decodes it.
func (w *workspace) statusBlockOf(t *testing.T, id int) statuscmd.Block {
	t.Helper()
	r := w.run(t, humanEnv, "status", itoa(id), "--block", "--json")
	require.Equal(t, exitOK, r.code, "stdout %s stderr %s", r.stdout, r.stderr)
	var b statuscmd.Block
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &b), r.stdout)
	return b
}

func TestStatusBlockOfAnEscalatedIssue(t *testing.T) {
	w := newWorkspace(t, testpipeline.Read(t, "controller"))
	id := w.create(t, "Add checkout page", "--stage", "implement.feedback")
	now := time.Now().UTC().Truncate(time.Second)
	w.change(t, id, func(iss *issues.Issue) {
		atPRReady(iss)
		iss.History = append(iss.History,
			issues.HistoryEntry{From: "implement.feedback", To: "pr_ready", Kind: stages.MoveAdvance, Actor: "agent", At: now.Add(-20 * time.Minute)},
			issues.HistoryEntry{From: "pr_ready", To: "implement.feedback", Kind: stages.MoveStepBack, Actor: "controller", Reason: "CI failed", At: now.Add(-15 * time.Minute)},
			issues.HistoryEntry{From: "implement.feedback", To: "pr_ready", Kind: stages.MoveAdvance, Actor: "agent", At: now.Add(-10 * time.Minute)},
			issues.HistoryEntry{From: "pr_ready", To: "pr_ready", Kind: stages.MoveEscalate, Actor: "controller", Reason: "CI failed 4 times", At: now.Add(-5 * time.Minute)})
		iss.Escalated = &issues.Escalation{Stage: "pr_ready", Kind: "budget", At: now.Add(-5 * time.Minute),
			Reason: "CI failed 4 times, the budget of step backs for it (3); last: CI failed on abc: test-unit"}
		iss.Attempts = map[string]int{"ci_failed": 4, "conflict": 1}
		iss.Breaker = &issues.Breaker{State: issues.BreakerHalfOpen, NoProgress: 2, SameError: 1, Fingerprint: "3f9a0c", Failing: []string{"test-unit"}}
	})
	poll := &issues.Poll{PR: 1, Iteration: 7, Status: "escalated: CI failed 4 times", Started: now.Add(-20 * time.Minute), NextAt: now.Add(30 * time.Minute)}
	poll.Log(now.Add(-6*time.Minute), "new head abc123def456")
	poll.Log(now.Add(-time.Minute), "escalated: CI failed 4 times")
	w.setPoll(t, id, poll)
	_, err := w.box(id).Put(context.Background(), outbox.Message{To: outbox.ToManager, Kind: "escalation", Text: "issue 1 needs a person"})
	require.NoError(t, err)

	r := w.run(t, humanEnv, "status", itoa(id), "--block")
	require.Equal(t, exitOK, r.code, "a forge that cannot be read is shown, not fatal: %s", r.stderr)
	for _, re := range []string{
		`issue 1: Add checkout page`,
		`stage:\s+pr_ready \(flow default\), for 10m\d+s`,
		`waiting on:\s+escalated: CI failed 4 times, the budget`,
		`iteration:\s+7; next look in \d+m`,
		`pr:\s+#1`,
		`checks:\s+unknown: reading PR #1: `,
		`breaker:\s+half_open \(no progress 2, same error 1\), fingerprint 3f9a0c`,
		// Counted before the failure that escalates was no step back: the
		// count never shows above its budget.
		`budgets:\s+ci_failed 3/3 \(then failed again: escalated\), no_new_ci 0/2, polling_timeout 0/2, ci_cancelled 0/2, conflict 1/3`,
		`latest:\s+\S+ \S+ by controller: escalated: CI failed 4 times`,
		"messages:\\s+1 undelivered \\(`agenttree inbox 1`\\)",
		`escalated:\s+budget, \S+ \S+: CI failed 4 times`,
		"next:\\s+for a person: `agenttree resume 1 --reason TEXT`, or `agenttree skip 1 --reason TEXT`, or `agenttree abort 1 --reason TEXT`",
	} {
		assert.Regexp(t, re, r.stdout)
	}

	b := w.statusBlockOf(t, id)
	assert.Equal(t, "pr_ready", b.Stage)
	assert.Equal(t, "escalated: CI failed 4 times, the budget of step backs for it (3); last: CI failed on abc: test-unit", b.WaitingOn)
	assert.Equal(t, now.Add(-10*time.Minute), b.EnteredAt.UTC(), "an escalation does not move the issue")
	assert.Equal(t, 7, b.Iteration)
	assert.Equal(t, issues.Breaker{State: issues.BreakerHalfOpen, NoProgress: 2, SameError: 1, Fingerprint: "3f9a0c", Failing: []string{"test-unit"}}, b.Breaker)
	assert.Equal(t, []statuscmd.BudgetUse{{Kind: "ci_failed", Used: 3, Max: 3, Escalated: true}, {Kind: "no_new_ci", Used: 0, Max: 2}, {Kind: "polling_timeout", Used: 0, Max: 2}, {Kind: "ci_cancelled", Used: 0, Max: 2}, {Kind: "conflict", Used: 1, Max: 3}}, b.Budgets)
	require.NotNil(t, b.LatestAction)
	assert.Equal(t, statuscmd.Action{At: now.Add(-time.Minute), By: "controller", What: "escalated: CI failed 4 times"}, *b.LatestAction)
	assert.Equal(t, 1, b.Undelivered)
	require.NotNil(t, b.PR)
	assert.Equal(t, 1, b.PR.Number)
	assert.Nil(t, b.Checks)
	assert.Contains(t, b.ForgeError, "reading PR #1: ")
	assert.Equal(t, statuscmd.Recommendation{For: statuscmd.WaiterPerson, Run: statuscmd.ResolveCommands(1), Why: b.WaitingOn}, b.Recommendation)
}

func TestStatusBlockOfANewIssue(t *testing.T) {
	w := newWorkspace(t, testpipeline.Read(t, "cli"))
	id := w.create(t, "Add login page", "--stage", "implement.code")
	b := w.statusBlockOf(t, id)
	assert.Equal(t, issues.Breaker{State: issues.BreakerClosed}, b.Breaker, "no breaker yet is a closed one")
	assert.Zero(t, b.Iteration)
	assert.Nil(t, b.PR, "no PR, no forge asked")
	assert.Empty(t, b.ForgeError)
	assert.Equal(t, statuscmd.Recommendation{For: statuscmd.WaiterPerson, Role: stages.RoleDeveloper, Run: []string{"agenttree start 1"},
		Why: "no developer agent is running: start one with `agenttree start 1`"}, b.Recommendation, "no agent was started for it")
	require.NotNil(t, b.LatestAction)
	assert.Equal(t, "create at implement.code", b.LatestAction.What)

	r := w.run(t, humanEnv, "status", itoa(id), "--block")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.NotContains(t, r.stdout, "checks:")
	assert.Contains(t, r.stdout, "next:        for a person: `agenttree start 1`")
}

// The checks come from the forge, as it reports them with the PR: on the
// local forge, a look at the status never starts a CI run.
func TestStatusBlockShowsTheChecksOfThePR(t *testing.T) {
	w := newForgeRepo(t, testpipeline.Read(t, "local-forge"))
	id := w.create(t, "Add checkout page", "--stage", "implement")
	gittest.Run(t, w.dir, "checkout", "-q", "-b", w.issue(t, id).Branch)
	gittest.Commit(t, w.dir, "checkout.txt", "checkout\n", "checkout page")
	r := w.run(t, agentEnv, "next")
	require.Equal(t, exitOK, r.code, r.stdout+r.stderr)
	head := w.issue(t, id).HeadSHA

	for range 2 {
		b := w.statusBlockOf(t, id)
		require.NotNil(t, b.PR, b.ForgeError)
		assert.Equal(t, statuscmd.BlockPR{Number: 1, URL: "local:shop#1", State: "open", Head: head, Mergeable: "mergeable"}, *b.PR)
		assert.Equal(t, &statuscmd.Checks{Head: head}, b.Checks, "CI has not started, and looking does not start it")
	}

	r = w.run(t, agentEnv, "pr", "wait", itoa(id), "--interval", "10ms")
	require.Equal(t, exitBlocked, r.code, "CI fails: ok.txt is missing: %s", r.stdout)
	b := w.statusBlockOf(t, id)
	assert.Equal(t, &statuscmd.Checks{Head: head, Started: true, Total: 1, Failed: 1, Failing: []string{"ci"}}, b.Checks)
	r = w.run(t, humanEnv, "status", itoa(id), "--block")
	require.Equal(t, exitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "0 passed, 1 failed, 0 pending of 1 on "+head[:12]+" (failed: ci)")
}
