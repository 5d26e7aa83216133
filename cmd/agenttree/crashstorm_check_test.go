package main

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"github.com/agenttree/agenttree/chain"
	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/engine/issues/eventlog"
	"github.com/agenttree/agenttree/engine/outbox"
	"github.com/agenttree/agenttree/forge"
	"github.com/agenttree/agenttree/forge/local"
	"github.com/agenttree/agenttree/internal/gittest"
	"github.com/agenttree/agenttree/stages"
)

// logLines are the lines of the issue's events.jsonl in dir that ended,
// decoded: a kill mid-append leaves a last line without its newline,
// which the next write drops (readEvents).
func logLines(t *testing.T, dir string) []eventlog.Event {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "events.jsonl"))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	require.NoError(t, err)
	lines := strings.Split(string(data), "\n")
	var out []eventlog.Event
	for n, line := range lines[:len(lines)-1] {
		var ev eventlog.Event
		require.NoError(t, json.Unmarshal([]byte(line), &ev), "%s line %d", dir, n+1)
		out = append(out, ev)
	}
	return out
}

// logMoves is the history the issue's log in dir holds, line by line.
func logMoves(t *testing.T, dir string) []issues.HistoryEntry {
	t.Helper()
	var out []issues.HistoryEntry
	for _, ev := range logLines(t, dir) {
		out = append(out, ev.Entries...)
	}
	return out
}

// settle runs one controller nobody kills until every message queued is
// delivered, then stops it.
func (s *storm) settle(t *testing.T) {
	t.Helper()
	ctl := s.r.startController(t)
	// Up, not stopped (SIGTERM) before it is listening for it.
	pid := "pid=" + strconv.Itoa(ctl.Process.Pid)
	require.Eventually(t, func() bool {
		data, err := os.ReadFile(s.r.log.Name())
		return err == nil && strings.Contains(string(data), pid)
	}, stormWithin, lookEvery, "the last controller starts")
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		for _, it := range s.issues {
			pending, err := s.r.outbox(it.id).Pending()
			require.NoError(c, err)
			require.Emptyf(c, pending, "issue %d: messages not delivered", it.id)
		}
	}, stormWithin, lookEvery)
	stopController(t, ctl)
}

// stormChecked counts what the storm's checks found.
type stormChecked struct {
	transitions, versions, stepBacks, typed, prs, merges int
	// verified counts the issues and the forge's records verify found
	// clean.
	verified, records int
}

// check asserts what the storm must leave: every issue and forge record
// verifies; each issue is accepted, its version is its log's lines (one
// version each) and its history the log's; its planned CI failures
// stepped it back once each, and nothing else did; one PR per branch,
// merged once; every message queued delivered, each of the agent's
// typed into its pane once.
func (s *storm) check(t *testing.T) stormChecked {
	t.Helper()
	var got stormChecked
	res := s.r.run(t, humanEnv, "verify", "--json")
	require.Equal(t, exitOK, res.code, "verify: stdout %s stderr %s", res.stdout, res.stderr)
	var v verifyOut
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &v), res.stdout)
	assert.True(t, v.OK)
	assert.Len(t, v.Issues, len(s.issues), "verify checked every issue")
	for _, rep := range v.Issues {
		assert.True(t, rep.OK, "issue %d: %v", rep.ID, rep.Problems)
	}
	for _, rep := range v.Forge {
		assert.True(t, rep.OK, "%s: %v", rep.Record, rep.Problems)
	}
	got.verified, got.records = len(v.Issues), len(v.Forge)

	branches := map[string]int{}
	for _, it := range s.issues {
		// As the store reads it: the log's last line where a kill left
		// issue.yaml one behind it.
		read, err := s.r.issues.Get(it.id)
		require.NoError(t, err)
		iss := *read
		lines := logLines(t, s.r.hostDir(it.id))
		require.Len(t, lines, iss.Version, "issue %d: one log line per version", it.id)
		for i, ev := range lines {
			assert.Equal(t, i+1, ev.Version, "issue %d: line %d", it.id, i+1)
		}
		assert.Equal(t, iss.History, logMoves(t, s.r.hostDir(it.id)), "issue %d: the history is the log's", it.id)
		assert.Equal(t, "accepted", iss.Stage, describe(&iss))
		assert.Nil(t, iss.EntryPending, describe(&iss))
		assert.Nil(t, iss.Escalated, describe(&iss))
		backs := moves(&iss, stages.MoveStepBack)
		assert.Equal(t, it.fails, backs, "issue %d: each failure of CI planned stepped it back once: %s", it.id, describe(&iss))
		got.transitions += len(iss.History) - 1
		got.versions += iss.Version
		got.stepBacks += backs
		branches[iss.Branch] = 0
		got.typed += s.checkPane(t, it, backs)
	}

	prs := s.checkPRs(t, branches)
	got.prs = len(prs)
	got.merges = s.checkMerges(t, prs)
	return got
}

// checkPane asserts that issue it's outbox holds no message undelivered,
// a message to the agent for each of its backs step backs, and every
// message to the agent sent, typed into its pane once, and nothing else
// typed there. It returns how many messages were typed.
func (s *storm) checkPane(t *testing.T, it *stormIssue, backs int) int {
	t.Helper()
	pending, err := s.r.outbox(it.id).Pending()
	require.NoError(t, err)
	assert.Empty(t, pending, "issue %d: nothing left undelivered", it.id)
	agent := s.r.agentMessages(t, it.id)
	// A rebase of the controller's (check_conflicts) is told too.
	told := slices.DeleteFunc(slices.Clone(agent), func(m outbox.Message) bool { return m.Kind != string(stages.MoveStepBack) })
	assert.Len(t, told, backs, "issue %d: a message to the agent for each step back: %+v", it.id, agent)
	var want []string
	texts := map[string]int{}
	for _, m := range agent {
		assert.Equal(t, outbox.Sent, m.State, "issue %d: %+v", it.id, m)
		want = append(want, outbox.Marker(m))
		texts[m.Text]++
	}
	data, err := os.ReadFile(it.received)
	require.NoError(t, err)
	got := string(data)
	assert.ElementsMatch(t, want, markerRE.FindAllString(got, -1), "issue %d: each message typed once: %q", it.id, got)
	for text, n := range texts {
		assert.Equal(t, n, strings.Count(got, text), "issue %d: the message arrived whole, once: %q", it.id, got)
	}
	return len(agent)
}

// checkPRs asserts that the local forge holds one PR for each branch,
// merged, and none for any other; it returns the branch of each PR, by
// number.
func (s *storm) checkPRs(t *testing.T, branches map[string]int) map[int]string {
	t.Helper()
	dir := filepath.Join(s.r.dir, "_agenttree", "host", "forge", "prs")
	files, err := filepath.Glob(filepath.Join(dir, "*.chain.jsonl"))
	require.NoError(t, err)
	prs := map[int]string{}
	opened := map[string]int{}
	for _, f := range files {
		// Through its log, as the forge reads it: a kill may have left
		// the record one version behind, or not written yet.
		data, err := chain.FileAt(strings.TrimSuffix(f, ".chain.jsonl") + ".yaml").Read()
		if errors.Is(err, os.ErrNotExist) {
			continue // a log a kill left empty: no PR
		}
		require.NoError(t, err, f)
		var rec local.Record
		require.NoError(t, yaml.Unmarshal(data, &rec), f)
		prs[rec.Number] = rec.Branch
		opened[rec.Branch]++
		assert.Equal(t, forge.StateMerged, rec.State, "PR #%d of %s", rec.Number, rec.Branch)
	}
	for b := range branches {
		assert.Equal(t, 1, opened[b], "one PR for %s", b)
	}
	assert.Len(t, prs, len(branches), "no PR for anything else: %v", opened)
	return prs
}

// mergedRE finds the PR a commit on main merged, squashed ("title (#N)")
// or merged ("Merge pull request #N from ...").
var mergedRE = regexp.MustCompile(`^Merge pull request #([0-9]+) |\(#([0-9]+)\)$`)

// checkMerges asserts that origin's main has one merge of each PR, and no
// other commit since the storm began; it returns how many.
func (s *storm) checkMerges(t *testing.T, prs map[int]string) int {
	t.Helper()
	log := gittest.Run(t, s.r.bare(), "log", "--first-parent", "--format=%s", s.base+"..main")
	subjects := strings.Split(log, "\n")
	merged := map[int]int{}
	for _, subject := range subjects {
		m := mergedRE.FindStringSubmatch(subject)
		require.NotNil(t, m, "a commit on main that merged no PR: %q", subject)
		n, err := strconv.Atoi(m[1] + m[2])
		require.NoError(t, err)
		merged[n]++
	}
	for n, branch := range prs {
		assert.Equal(t, 1, merged[n], "PR #%d (%s) merged once", n, branch)
	}
	assert.Len(t, merged, len(prs), "merges of PRs that do not exist: %v", merged)
	return len(subjects)
}
