package main

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/internal/testpipeline"
	"github.com/agenttree/agenttree/stages"
)

// TestFiftyConcurrentActionsLoseNothing starts 50 processes at once on
// five issues, each ready to leave its agent's stage: for each issue five
// agents' `next`, four people's `approve` and one `controller --once`
// (docs/RELIABILITY.md). Whatever order the locks give them: no update is
// lost (each issue's version is the number of its log's lines, and its
// history is what those lines added), no move is made twice (one advance
// past the agent's stage, at most one approval), every process ends with
// an answer (a move, a wait, a refusal) and every issue verifies.
func TestFiftyConcurrentActionsLoseNothing(t *testing.T) {
	const issuesN, agents, people = 5, 5, 4
	w := newWorkspace(t, testpipeline.Read(t, "review-gate"))
	ids := make([]int, issuesN)
	for i := range ids {
		ids[i] = w.create(t, fmt.Sprintf("Issue %d", i+1), "--stage", "implement.code")
		w.writeDoc(t, ids[i], "review.md", reviewDone)
	}
	agentEnv, personEnv := processEnv("AGENTTREE_ROLE=developer"), processEnv()
	type proc struct {
		what string
		id   int
		cmd  *exec.Cmd
	}
	var procs []proc
	for _, id := range ids {
		for range agents {
			procs = append(procs, proc{"next", id, w.command(agentEnv, "next", "-i", fmt.Sprint(id), "--json")})
		}
		for range people {
			procs = append(procs, proc{"approve", id, w.command(personEnv, "approve", fmt.Sprint(id))})
		}
		procs = append(procs, proc{"controller", id, w.command(personEnv, "controller", "--once", "--issue", fmt.Sprint(id))})
	}
	require.Len(t, procs, 50)
	cmds := make([]*exec.Cmd, len(procs))
	for i, p := range procs {
		cmds[i] = p.cmd
	}
	outs, errs := startTogether(t, cmds)
	codes := map[string]map[int]int{}
	for i, p := range procs {
		code := wait(t, p.cmd)
		if codes[p.what] == nil {
			codes[p.what] = map[int]int{}
		}
		codes[p.what][code]++
		// 0 moved or done, 3 waiting or lost a race, 2 refused (an
		// approval before the issue reached its review): each an answer,
		// never a crash nor a half-done write.
		require.Contains(t, []int{0, 2, 3}, code, "%s on issue %d: stdout %s stderr %s", p.what, p.id, outs[i], errs[i])
		assert.NotContains(t, errs[i].String(), "panic", "%s on issue %d", p.what, p.id)
		if code == 2 {
			assert.NotEmpty(t, errs[i].String(), "a refusal says why: %s on issue %d", p.what, p.id)
		}
	}
	t.Logf("exit codes by action: %v", codes)

	for _, id := range ids {
		iss := w.issue(t, id)
		events := readEvents(t, filepath.Join(w.hostDir(id), "events.jsonl"))
		assert.Len(t, events, iss.Version, "issue %d: one log line a version, none lost", id)
		var entries int
		for _, ev := range events {
			e, _ := ev["entries"].([]any)
			entries += len(e)
		}
		assert.Equal(t, len(iss.History), entries, "issue %d: the history is what the log's lines added", id)
		moves := map[string]int{}
		for _, h := range iss.History {
			moves[string(h.Kind)+" "+h.From+"→"+h.To]++
		}
		assert.Equal(t, 1, moves[string(stages.MoveAdvance)+" implement.code→implementation_review"], "issue %d advanced once: %v", id, moves)
		for m, n := range moves {
			assert.Equal(t, 1, n, "issue %d: %s made %d times", id, m, n)
		}
		assert.Contains(t, []string{"implementation_review", "accepted"}, iss.Stage, "issue %d", id)
	}
	res := w.run(t, humanEnv, "verify")
	require.Equal(t, 0, res.code, "verify: %s %s", res.stdout, res.stderr)
}
