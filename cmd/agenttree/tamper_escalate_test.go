package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/internal/gittest"
	"github.com/agenttree/agenttree/internal/gitx"
	"github.com/agenttree/agenttree/internal/testpipeline"
	"github.com/agenttree/agenttree/stages"
)

// The end-to-end tests of a record of the local forge changed outside
// agenttree, as an agent of the same user would (the advisory
// deployment), with `agenttree controller` running as a process of its
// own: the issue stops for a person (escalated, tampered), never sent back
// to the agent nor charged to its budget; the controller logs it as an
// error; verify names the record and what changed.

// forgeDir is the local forge's records in the rig's state directory.
func (r *rig) forgeDir() string { return filepath.Join(r.dir, "_agenttree", "host", "forge") }

// escalated is a condition of waitFor.
func escalated(iss *issues.Issue) bool { return iss.Escalated != nil }

// controllerLog is what the rig's controllers logged so far.
func (r *rig) controllerLog(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(r.log.Name())
	require.NoError(t, err)
	return string(data)
}

// stepBacksSent counts the step backs' messages in issue id's outbox to
// its agent: the work sent back to it (an escalation tells it too that
// the issue waits for a person, which is no work).
func (r *rig) stepBacksSent(t *testing.T, id int) int {
	t.Helper()
	n := 0
	for _, m := range r.agentMessages(t, id) {
		if m.Kind == string(stages.MoveStepBack) {
			n++
		}
	}
	return n
}

// verifyJSON runs `agenttree verify --json` and decodes it.
type verifyOut struct {
	OK     bool `json:"ok"`
	Issues []struct {
		ID       int      `json:"id"`
		OK       bool     `json:"ok"`
		Missing  bool     `json:"missing"`
		Problems []string `json:"problems"`
	} `json:"issues"`
	Forge []struct {
		Record   string   `json:"record"`
		Path     string   `json:"path"`
		OK       bool     `json:"ok"`
		Problems []string `json:"problems"`
		Changes  []string `json:"changes"`
		Fix      string   `json:"fix"`
	} `json:"forge"`
}

func (w *workspace) verifyJSON(t *testing.T) verifyOut {
	t.Helper()
	res := w.run(t, humanEnv, "verify", "--json")
	assert.Equal(t, exitBlocked, res.code, "stdout %s stderr %s", res.stdout, res.stderr)
	var out verifyOut
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &out), res.stdout)
	return out
}

// assertTamperEscalation checks what a person is told of issue iss,
// escalated for record, and that the controller logged it as an error.
func (r *rig) assertTamperEscalation(t *testing.T, iss *issues.Issue, record string, says []string) {
	t.Helper()
	require.NotNil(t, iss.Escalated)
	assert.Equal(t, issues.EscalatedTampered, iss.Escalated.Kind)
	for _, want := range append(says, record+": its record was changed outside agenttree", "no work for the agent",
		"`agenttree verify`", "`agenttree resume "+itoa(iss.ID)+" --reason TEXT`") {
		assert.Contains(t, iss.Escalated.Reason, want)
	}
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		var line string
		for _, l := range strings.Split(r.controllerLog(t), "\n") {
			// The escalation's own line, not a poll's report of it.
			if strings.Contains(l, `msg="escalated: `) && strings.Contains(l, record+": its record was changed outside agenttree") {
				line = l
			}
		}
		require.NotEmpty(c, line, "the controller logged the escalation")
		assert.Contains(c, line, "level=ERROR")
		assert.Contains(c, line, "kind=tampered")
	}, arriveWithin, lookEvery)

	res := r.run(t, humanEnv, "status", "--json")
	require.Equal(t, exitOK, res.code, res.stderr)
	assert.Contains(t, res.stdout, `"kind": "tampered"`)
}

// A CI result written by hand (state: success for the head, before CI
// ran) stops the issue for a person at pr_ready: not a step back, nothing
// charged to the agent's budget, no work sent to it.
func TestHandWrittenCIResultEscalates(t *testing.T) {
	r := newRig(t, "controller")
	ctl := r.startController(t)
	id := r.create(t, "Add checkout page", "--stage", "implement.feedback")
	r.checkoutAndCommit(t, id)
	head := strings.TrimSpace(gittest.Run(t, r.dir, "rev-parse", "HEAD"))
	checks := filepath.Join(r.forgeDir(), "checks")
	require.NoError(t, os.MkdirAll(checks, 0o755))
	result := filepath.Join(checks, head+".yaml")
	require.NoError(t, os.WriteFile(result, []byte("sha: "+head+"\nattempt: 1\nstate: success\ncommand: test -f ok.txt\n"), 0o644))
	r.agentNext(t, id)

	iss := r.waitFor(t, id, "escalated", escalated)
	record := "local CI of " + gitx.ShortSHA(head)
	r.assertTamperEscalation(t, iss, record, []string{"it has no log", result, "a person removes the record to run CI again"})
	assert.Equal(t, "pr_ready", iss.Stage, "not stepped back")
	assert.Zero(t, moves(iss, stages.MoveStepBack))
	assert.Empty(t, iss.Attempts, "no budget charged")
	assert.Zero(t, r.stepBacksSent(t, id), "no work sent to the agent")
	assert.NotContains(t, iss.Outputs, stages.CIPassedSHA)

	out := r.verifyJSON(t)
	assert.False(t, out.OK)
	var found bool
	for _, f := range out.Forge {
		if f.Record == record {
			found = true
			assert.False(t, f.OK)
			assert.Equal(t, result, f.Path)
			assert.Equal(t, []string{"it has no log"}, f.Problems)
			assert.Contains(t, f.Fix, "removes the record")
		}
	}
	assert.True(t, found, "verify lists %s: %+v", record, out.Forge)
	res := r.run(t, humanEnv, "verify")
	assert.Equal(t, exitBlocked, res.code)
	assert.Contains(t, res.stdout, record+": CHANGED OUTSIDE AGENTTREE")
	assert.Contains(t, res.stdout, "issue 1: ok")
	stopController(t, ctl)
}

// An approval added by hand to the PR record stops the issue for a person
// wherever agenttree next reads the record: at pr_ready after a step back
// (create_pr reads it before it pushes), and at the human review, where
// only the controller's watch of the PR reads it. Nothing is charged to
// the agent's budget beyond what it spent before, no work sent to it.
func TestApprovalAddedByHandEscalates(t *testing.T) {
	for _, tt := range []struct {
		name string
		// before brings the issue to where the record is changed, and
		// returns the stage it is escalated at.
		before func(t *testing.T, r *rig, id int) string
		// after is what the agent does once the record is changed.
		after func(t *testing.T, r *rig, id int)
		backs int
	}{
		{
			name: "at pr_ready after a step back",
			before: func(t *testing.T, r *rig, id int) string {
				r.agentNext(t, id)
				r.waitFor(t, id, "stepped back once", steppedBack(1))
				return "pr_ready"
			},
			after: func(t *testing.T, r *rig, id int) { r.fixCI(t, id) },
			backs: 1,
		},
		{
			name: "at the human review",
			before: func(t *testing.T, r *rig, id int) string {
				gittest.Commit(t, r.dir, "ok.txt", "ok\n", "make CI pass")
				r.agentNext(t, id)
				r.waitFor(t, id, "at implementation_review", atStage("implementation_review"))
				return "implementation_review"
			},
			after: func(*testing.T, *rig, int) {},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t, "controller")
			ctl := r.startController(t)
			id := r.create(t, "Add checkout page", "--stage", "implement.feedback")
			r.checkoutAndCommit(t, id)
			stage := tt.before(t, r, id)
			spent := r.issue(t, id).Attempts
			// The controller queues a step back's message just after the
			// step back: counted once it is there, not before.
			require.Eventually(t, func() bool { return r.stepBacksSent(t, id) == tt.backs }, settleWithin, lookEvery, "one message per step back")
			sent := tt.backs

			head := strings.TrimSpace(gittest.Run(t, r.dir, "rev-parse", "HEAD"))
			path := filepath.Join(r.forgeDir(), "prs", "1.yaml")
			data, err := os.ReadFile(path)
			require.NoError(t, err)
			forged := strings.Replace(string(data), "state: open", "state: open\napprovals:\n    - by: alice\n      sha: "+head+"\n      at: 2026-01-01T00:00:00Z", 1)
			require.NotEqual(t, string(data), forged)
			require.NoError(t, os.WriteFile(path, []byte(forged), 0o644))
			tt.after(t, r, id)

			iss := r.waitFor(t, id, "escalated", escalated)
			r.assertTamperEscalation(t, iss, "local PR #1", []string{"its content is not the last version its log holds (approvals added)", path,
				"a person puts back the version agenttree last wrote"})
			assert.Equal(t, stage, iss.Stage)
			assert.Equal(t, tt.backs, moves(iss, stages.MoveStepBack), "no step back for it")
			assert.Equal(t, spent, iss.Attempts, "no budget charged for it")
			assert.Equal(t, sent, r.stepBacksSent(t, id), "no work sent to the agent for it")
			assert.NotContains(t, iss.Outputs, stages.ApprovedSHA)
			got, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.Equal(t, forged, string(got), "the changed record is left for a person to look at")

			out := r.verifyJSON(t)
			var found bool
			for _, f := range out.Forge {
				if f.Record == "local PR #1" {
					found = true
					assert.False(t, f.OK)
					assert.Equal(t, []string{"approvals added"}, f.Changes)
				}
			}
			assert.True(t, found, "verify lists the PR record: %+v", out.Forge)
			stopController(t, ctl)
		})
	}
}

// An issue directory removed by hand is listed as missing by status and
// verify (which fails), the last issue's too: ids are never given twice,
// and agenttree never removes one.
func TestRemovedIssueDirectoryIsMissing(t *testing.T) {
	w := newWorkspace(t, testpipeline.Read(t, "cli"))
	for _, title := range []string{"Add login page", "Add search", "Add checkout"} {
		w.create(t, title)
	}
	for _, id := range []int{2, 3} {
		require.NoError(t, os.RemoveAll(w.hostDir(id)))
	}

	res := w.run(t, humanEnv, "status")
	require.Equal(t, exitOK, res.code, res.stderr)
	for _, id := range []int{2, 3} {
		assert.Regexp(t, `(?m)^`+itoa(id)+`\s+missing\s+.*its directory was removed outside agenttree`, res.stdout)
		assert.Contains(t, res.stdout, "issue "+itoa(id)+": missing: its directory "+w.hostDir(id)+" was removed outside agenttree")
	}
	assert.Contains(t, res.stdout, "Add login page")

	res = w.run(t, humanEnv, "status", "--json")
	require.Equal(t, exitOK, res.code, res.stderr)
	var rows []struct {
		ID         int    `json:"id"`
		Missing    bool   `json:"missing"`
		Error      string `json:"error"`
		WaitingFor string `json:"waiting_for"`
	}
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &rows), res.stdout)
	require.Len(t, rows, 3)
	byID := map[int]bool{}
	for _, row := range rows {
		byID[row.ID] = row.Missing
		if row.Missing {
			assert.Contains(t, row.Error, "removed outside agenttree")
			assert.Equal(t, "person", row.WaitingFor)
		}
	}
	assert.Equal(t, map[int]bool{1: false, 2: true, 3: true}, byID)

	res = w.run(t, humanEnv, "verify")
	assert.Equal(t, exitBlocked, res.code, res.stdout)
	assert.Contains(t, res.stdout, "issue 1: ok")
	assert.Contains(t, res.stdout, "issue 2: MISSING\n  its directory "+w.hostDir(2)+" was removed outside agenttree")
	assert.Contains(t, res.stdout, "issue 3: MISSING")
	assert.Contains(t, res.stdout, "3 issues: 1 consistent, 0 changed outside agenttree, 2 missing")
	assert.NotContains(t, res.stdout, "agenttree repair 2", "repair has nothing to restore from")
	out := w.verifyJSON(t)
	require.Len(t, out.Issues, 3)
	assert.True(t, out.Issues[1].Missing)
	assert.False(t, out.Issues[1].OK)

	res = w.run(t, humanEnv, "verify", "3")
	assert.Equal(t, exitBlocked, res.code, res.stdout)
	assert.Contains(t, res.stdout, "issue 3: MISSING")
	res = w.run(t, humanEnv, "issue", "show", "2")
	assert.NotEqual(t, exitOK, res.code)
	assert.Contains(t, res.stderr, "issue 2 is missing: its directory")

	// The next issue gets an id of its own.
	assert.Equal(t, 4, w.create(t, "Add payments"))
}
