//go:build unix

package examples_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/cmd/agenttree/statuscmd"
	"github.com/agenttree/agenttree/controller/api"
	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/engine/outbox"
	"github.com/agenttree/agenttree/internal/gittest"
	"github.com/agenttree/agenttree/stages"
)

// noteSnippet is a design-note pipeline of stages/load/testdata/designnotes
// and where its CI waits: the stage an agent hands the issue on to, and
// where a CI failure (back) and a conflict (conflictBack) step it back.
// background: the snippet watches CI in the background (Option C's
// poll_pr_status), with no time limit on a run.
type noteSnippet struct {
	file               string
	at, next           string
	back, conflictBack string
	background         bool
}

// The snippets whose CI wait is a hook of agenttree's (the script
// alternative waits with its own script, which is its CI).
var noteSnippets = []noteSnippet{
	{file: "option-a.yaml", at: "pr_ready", next: "implementation_review", back: "implement.feedback", conflictBack: "implement.feedback"},
	{file: "option-b.yaml", at: "implementation_review", next: "implementation_review", back: "implement.code", conflictBack: "implement.code"},
	{file: "option-c.yaml", at: "implementation_review", next: "implementation_review", back: "implement.code", conflictBack: "implement.code", background: true},
	{file: "config-changes.yaml", at: "pr_ready", next: "implementation_review", back: "implement.feedback", conflictBack: "implement.feedback"},
	// conflict_handling has no on_conflict: a conflict steps back as a
	// bare step_back does.
	{file: "configuration-options.yaml", at: "pr_ready", next: "implementation_review", back: "implement.feedback", conflictBack: "implement.feedback"},
}

// scenarioRig is a rig over a design-note snippet whose CI command writes
// its shell's pid to pids/SHA, one line per attempt, before it runs
// `make test`, so a test can stop a run as a person would; with hold set,
// a run waits while hold/SHA exists.
type scenarioRig struct {
	*rig
	snippet    noteSnippet
	pids, hold string
}

// ciCommand is the `ci:` line the snippets' added settings carry.
const ciCommand = "ci: {command: make test}"

func newScenarioRig(t *testing.T, s noteSnippet, ci string, edits ...string) *scenarioRig {
	t.Helper()
	config, err := os.ReadFile(filepath.Join("..", "stages", "load", "testdata", "designnotes", s.file))
	require.NoError(t, err)
	text := string(config)
	require.Contains(t, text, ciCommand)
	text = strings.Replace(text, ciCommand, ci, 1)
	for i := 0; i+1 < len(edits); i += 2 {
		if strings.Contains(text, edits[i]) {
			text = strings.ReplaceAll(text, edits[i], edits[i+1])
		}
	}
	root := t.TempDir()
	sr := &scenarioRig{snippet: s, pids: filepath.Join(root, "pids"), hold: filepath.Join(root, "hold")}
	require.NoError(t, os.Mkdir(sr.pids, 0o755))
	require.NoError(t, os.Mkdir(sr.hold, 0o755))
	text = strings.NewReplacer("PIDS", sr.pids, "HOLD", sr.hold).Replace(text)
	sr.rig = newRigWith(t, []byte(text))
	return sr
}

// recordingCI is a `ci:` setting whose command records its pid and waits
// while it is held, then runs `make test`.
func recordingCI(extra string) string {
	return `ci: {command: 'echo $$ >> "PIDS/$AGENTTREE_CI_SHA"; while [ -f "HOLD/$AGENTTREE_CI_SHA" ]; do sleep 0.05; done; make test'` + extra + `}`
}

// handOn is an issue the developer implemented (with ok, so that CI
// passes) and handed on to the snippet's CI stage.
func (s *scenarioRig) handOn(t *testing.T, ok bool, before func(branch string)) int {
	t.Helper()
	id := s.create(t, "")
	s.move(t, id, person, "implement.code")
	s.work(t, id, ok)
	if before != nil {
		before(s.issue(t, id).Branch)
	}
	s.move(t, id, dev, "implement.feedback")
	s.put(t, id, "review.md", noCriticalIssues)
	s.move(t, id, dev, s.snippet.at)
	return id
}

// stopRun waits, ticking the controller, for attempt n (1-based) of sha's
// CI to start, and stops it with TERM, as a person's kill does.
func (s *scenarioRig) stopRun(t *testing.T, sha string, n int) {
	t.Helper()
	var pid int
	require.Eventually(t, func() bool {
		_, err := s.ctl.Tick(context.Background())
		require.NoError(t, err)
		data, _ := os.ReadFile(filepath.Join(s.pids, sha))
		lines := strings.Fields(string(data))
		if len(lines) < n {
			return false
		}
		pid, _ = strconv.Atoi(lines[n-1])
		return pid > 0
	}, settleWithin, tickEvery, "attempt %d of CI on %s never started", n, sha)
	require.NoError(t, syscall.Kill(pid, syscall.SIGTERM))
}

// told is what the issue's agent was sent, in order.
func (s *scenarioRig) told(t *testing.T, id int) []string {
	t.Helper()
	msgs, err := s.e.Outbox(id).Recent(0)
	require.NoError(t, err)
	var texts []string
	for _, m := range msgs {
		if m.To == outbox.ToAgent || m.To == "" {
			texts = append(texts, m.Text)
		}
	}
	return texts
}

// statusRow is issue id's row of `agenttree status --json`.
func (s *scenarioRig) statusRow(t *testing.T, id int) statuscmd.Row {
	t.Helper()
	ans, err := statuscmd.AnswerOf(context.Background(), s.e, api.StatusRequest{})
	require.NoError(t, err)
	for _, r := range ans.Rows {
		if r.ID == id {
			return r.Row
		}
	}
	require.Failf(t, "no status row", "issue %d is not among %d rows", id, len(ans.Rows))
	return statuscmd.Row{}
}

// steppedBack checks that issue iss went back to the stage to after kind
// of failure, charged to its own budget and no other, and that the agent
// was told each of told.
func (s *scenarioRig) steppedBack(t *testing.T, iss *issues.Issue, to, kind string, told ...string) {
	t.Helper()
	back := lastMove(iss, stages.MoveStepBack)
	assert.Equal(t, []string{s.snippet.at, to}, []string{back.From, back.To}, describe(iss))
	assert.Nil(t, iss.Escalated, "the agent is told, no person is called")
	assert.Equal(t, map[string]int{kind: 1}, iss.Attempts, "one step back, charged to %s alone", kind)
	texts := s.told(t, iss.ID)
	for _, text := range texts {
		assert.NotContains(t, text, "{{", "every placeholder is filled in")
	}
	for _, want := range told {
		assert.Truef(t, containsAny(texts, want), "the agent is told %q; it was told %q", want, texts)
	}
	row := s.statusRow(t, iss.ID)
	assert.Equal(t, to, row.Stage)
	assert.Equal(t, map[string]int{kind: 1}, row.Attempts)
	assert.Nil(t, row.Escalated)
}

// TestDesignNotesSnippetsThroughWhatCIDoes drives each design-note
// snippet whose CI wait is agenttree's through what CI and the base
// branch do to an issue: a conflict, a run a person cancels, a run queued
// behind another that starts late, and a run that outlasts the snippet's
// timeout. Each time the issue goes where the snippet says, its agent is
// told why, the right budget is charged and status says so (a CI failure:
// TestDesignNotesCIFailureStepsBackAndTellsTheAgent).
func TestDesignNotesSnippetsThroughWhatCIDoes(t *testing.T) {
	for _, s := range noteSnippets {
		t.Run(strings.TrimSuffix(s.file, ".yaml"), func(t *testing.T) {
			t.Parallel()
			t.Run("conflict", func(t *testing.T) {
				t.Parallel()
				r := newScenarioRig(t, s, recordingCI(""))
				id := r.handOn(t, true, func(branch string) {
					// main moves on meanwhile, changing the same file.
					gittest.Run(t, r.dir, "checkout", "-q", "main")
					gittest.Commit(t, r.dir, "feature.txt", "another checkout page\n", "someone else's checkout page")
					gittest.Run(t, r.dir, "push", "-q", "origin", "main")
					gittest.Run(t, r.dir, "checkout", "-q", branch)
				})
				iss := r.settle(t, id, s.conflictBack)
				r.steppedBack(t, iss, s.conflictBack, "conflict", "onflict")
			})
			t.Run("cancelled twice", func(t *testing.T) {
				t.Parallel()
				r := newScenarioRig(t, s, recordingCI(""))
				var sha string
				id := r.handOn(t, true, func(branch string) {
					// Held, so that a person has a run to stop.
					sha = strings.TrimSpace(gittest.Run(t, r.dir, "rev-parse", branch))
					require.NoError(t, os.WriteFile(filepath.Join(r.hold, sha), nil, 0o644))
					t.Cleanup(func() { _ = os.Remove(filepath.Join(r.hold, sha)) })
				})
				r.stopRun(t, sha, 1)
				// A cancelled run is run once more; stopped again, it is
				// no verdict on the code: the ci-stalled instructions.
				r.stopRun(t, sha, 2)
				iss := r.settle(t, id, s.back)
				r.steppedBack(t, iss, s.back, "ci_cancelled", "Nothing failed in the code")
				for _, text := range r.told(t, id) {
					assert.NotContains(t, text, "ci_feedback.md", "there is no feedback file to read")
				}
			})
			t.Run("queued behind another run", func(t *testing.T) {
				t.Parallel()
				// One run at a time, and the snippet's CI timeout cut to
				// 3s: time queued does not count against it.
				r := newScenarioRig(t, s, recordingCI(", max_parallel: 1"), "timeout: 600", "timeout: 3", "timeout_s: 600", "timeout_s: 3")
				// Another branch's CI takes the only slot and holds it.
				gittest.Run(t, r.dir, "checkout", "-q", "-b", "blocker", "main")
				blocker := gittest.Commit(t, r.dir, "other.txt", "other\n", "other work")
				gittest.Run(t, r.dir, "push", "-q", "origin", "blocker")
				gittest.Run(t, r.dir, "checkout", "-q", "main")
				require.NoError(t, os.WriteFile(filepath.Join(r.hold, blocker), nil, 0o644))
				_, err := r.e.Forge.Checks(context.Background(), blocker)
				require.NoError(t, err)

				id := r.handOn(t, true, nil)
				queuedSince := time.Now()
				require.EventuallyWithT(t, func(c *assert.CollectT) {
					_, err := r.ctl.Tick(context.Background())
					require.NoError(c, err)
					row := r.statusRow(t, id)
					assert.Contains(c, row.WaitingOn, "queued")
					assert.Greater(c, time.Since(queuedSince), 5*time.Second, "queued for longer than the timeout")
				}, settleWithin, 100*time.Millisecond)
				require.NoError(t, os.Remove(filepath.Join(r.hold, blocker)))

				iss := r.settle(t, id, s.next)
				if s.next == s.at {
					// Option B and C wait at the review itself: CI passed,
					// the review is the person's.
					iss = r.settleCIPassed(t, id)
				}
				assert.Zero(t, moves(iss, stages.MoveStepBack), describe(iss))
				assert.Empty(t, iss.Attempts, "no budget is charged for time queued")
				assert.Nil(t, iss.Escalated)
			})
			t.Run("outlasts the timeout", func(t *testing.T) {
				if s.background {
					t.Skip("a watch in the background sets no time limit on a run: the issue waits at its review")
				}
				t.Parallel()
				// The snippet's timeout cut to 2s; CI held until the test
				// ends (the local forge's own limit reaps it).
				r := newScenarioRig(t, s, recordingCI(", timeout_s: 60"), "timeout: 600", "timeout: 2", "timeout_s: 600", "timeout_s: 2")
				id := r.handOn(t, true, func(branch string) {
					sha := strings.TrimSpace(gittest.Run(t, r.dir, "rev-parse", branch))
					hold := filepath.Join(r.hold, sha)
					require.NoError(t, os.WriteFile(hold, nil, 0o644))
					t.Cleanup(func() {
						// Let go, the run finishes and writes its result:
						// waited for, so that the test's directories are
						// not removed under it.
						_ = os.Remove(hold)
						assert.Eventually(t, func() bool {
							checks, err := r.e.Forge.Checks(context.Background(), sha)
							return err == nil && len(checks) > 0 && checks[0].State.Done()
						}, 60*time.Second, 50*time.Millisecond, "CI of %s finishes once let go", sha)
					})
				})
				iss := r.settle(t, id, s.back)
				r.steppedBack(t, iss, s.back, "polling_timeout", "Nothing failed in the code")
			})
		})
	}
}

// settleCIPassed runs the controller's passes until its watch of issue
// id's PR has seen every check pass.
func (r *rig) settleCIPassed(t *testing.T, id int) *issues.Issue {
	t.Helper()
	var got *issues.Issue
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		_, err := r.ctl.Tick(context.Background())
		require.NoError(c, err)
		iss, err := r.e.Store.Get(id)
		require.NoError(c, err)
		w, err := r.e.Store.ReadWatch(id)
		require.NoError(c, err)
		require.NotNil(c, w.Poll)
		require.NotNil(c, w.Poll.Checks)
		require.Truef(c, w.Poll.Checks.Total > 0 && w.Poll.Checks.Passing == w.Poll.Checks.Total,
			"CI has not passed on issue %d: %+v; %s", id, w.Poll.Checks, describe(iss))
		got = iss
	}, settleWithin, tickEvery)
	return got
}
