package main

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// chainConfig is n plain stages s01..sNN and a terminal stage.
func chainConfig(n int) (config string, paths []string) {
	var b strings.Builder
	b.WriteString("stages:\n")
	for i := 1; i <= n; i++ {
		name := fmt.Sprintf("s%02d", i)
		paths = append(paths, name)
		fmt.Fprintf(&b, "  - name: %s\n", name)
	}
	b.WriteString("  - name: done\n    terminal: completion\n")
	return b.String(), append(paths, "done")
}

// TestNextSurvivesSIGKILL kills `agenttree next` at random moments and
// checks after every kill that issue.yaml is whole and consistent: the
// write is atomic, so a reader sees the issue before or after a move,
// never half of one.
func TestNextSurvivesSIGKILL(t *testing.T) {
	const (
		stagesInChain = 40
		iterations    = 150
		seed          = 20240601
	)
	t.Logf("random seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, seed))

	config, paths := chainConfig(stagesInChain)
	w := newWorkspace(t, config)
	env := processEnv() // a person: no AGENTTREE_ROLE

	issues := []int{w.create(t, "Crash me")}
	// Kills land anywhere in a run, and some after it: up to three dry
	// runs' time on this machine as loaded now, not a fixed time that a
	// busy machine never reaches the write in.
	window := 3 * runTime(t, w.command(env, "next", "-i", fmt.Sprint(issues[0]), "--dry-run"))
	var killedMidRun, finishedFirst int
	for i := range iterations {
		id := issues[len(issues)-1]
		cmd := w.command(env, "next", "-i", fmt.Sprint(id))
		require.NoError(t, cmd.Start())
		time.Sleep(time.Duration(rng.Int64N(int64(window) + 1)))
		_ = cmd.Process.Signal(syscall.SIGKILL) // fails only if it already exited
		err := cmd.Wait()
		var ee *exec.ExitError
		switch {
		case err == nil:
			finishedFirst++
		case errors.As(err, &ee):
			if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL {
				killedMidRun++
			} else {
				t.Fatalf("iteration %d: next failed on its own: %v", i, err)
			}
		default:
			t.Fatalf("iteration %d: wait: %v", i, err)
		}

		iss := readIssueFile(t, filepath.Join(w.hostDir(id), "issue.yaml"))
		require.Equal(t, id, iss.ID)
		require.NotEmpty(t, iss.History, "iteration %d", i)
		require.Equal(t, len(iss.History), iss.Version, "iteration %d: version and history disagree", i)
		require.Equal(t, iss.History[len(iss.History)-1].To, iss.Stage, "iteration %d: stage and history disagree", i)
		require.Contains(t, paths, iss.Stage, "iteration %d: unknown stage", i)
		for j := 1; j < len(iss.History); j++ {
			h := iss.History[j]
			require.Equal(t, iss.History[j-1].To, h.From, "iteration %d: history entry %d does not follow on", i, j)
			require.Equal(t, slices.Index(paths, h.From)+1, slices.Index(paths, h.To), "iteration %d: entry %d skips a stage", i, j)
		}
		// The log leads issue.yaml: a kill may leave it one line ahead,
		// which the next command finishes; it never reads as tampering.
		events := readEvents(t, filepath.Join(w.hostDir(id), "events.jsonl"))
		require.GreaterOrEqual(t, len(events), iss.Version, "iteration %d: a version without its event", i)
		require.LessOrEqual(t, len(events), iss.Version+1, "iteration %d: more than one event ahead", i)
		verify := w.run(t, humanEnv, "verify", itoa(id))
		require.Equal(t, exitOK, verify.code, "iteration %d: a kill reads as tampering: %s%s", i, verify.stdout, verify.stderr)
		if iss.Stage == "done" {
			issues = append(issues, w.create(t, "Crash me again"))
		}
	}

	advances := 0
	for _, id := range issues {
		iss := readIssueFile(t, filepath.Join(w.hostDir(id), "issue.yaml"))
		advances += iss.Version - 1
	}
	var strays []string
	for _, id := range issues {
		m, err := filepath.Glob(filepath.Join(w.hostDir(id), ".issue.yaml.tmp-*"))
		require.NoError(t, err)
		strays = append(strays, m...)
	}
	t.Logf("%d runs: %d killed mid-run, %d finished before the kill; %d advances recorded over %d issues; %d stray temp files",
		iterations, killedMidRun, finishedFirst, advances, len(issues), len(strays))
	assert.Positive(t, advances, "no run got as far as recording a move")

	// Stray temp files left by kills must not break reading the issues.
	if len(strays) == 0 {
		stray := filepath.Join(w.hostDir(issues[0]), ".issue.yaml.tmp-123456")
		require.NoError(t, os.WriteFile(stray, []byte("id: 1\nstage: half-writ"), 0o644))
	}
	out, err := w.command(env, "issue", "list").CombinedOutput()
	require.NoError(t, err, "issue list: %s", out)
	out, err = w.command(env, "issue", "list", "--json").CombinedOutput()
	require.NoError(t, err, "issue list --json: %s", out)
	out, err = w.command(env, "status").CombinedOutput()
	require.NoError(t, err, "status: %s", out)

	// A write a kill left unfinished is finished, never restored over.
	for _, id := range issues {
		out, err := w.command(env, "repair", itoa(id)).CombinedOutput()
		require.NoError(t, err, "%s", out)
		assert.NotContains(t, string(out), "restored", "nothing to restore after kills")
		iss := readIssueFile(t, filepath.Join(w.hostDir(id), "issue.yaml"))
		events := readEvents(t, filepath.Join(w.hostDir(id), "events.jsonl"))
		assert.Len(t, events, iss.Version, "issue %d: one line per version once finished", id)
	}
}

// runTime is how long cmd takes, the median of three runs.
func runTime(t *testing.T, cmd *exec.Cmd) time.Duration {
	t.Helper()
	var took []time.Duration
	for range 3 {
		c := exec.Command(cmd.Path, cmd.Args[1:]...)
		c.Dir, c.Env = cmd.Dir, cmd.Env
		start := time.Now()
		require.NoError(t, c.Run())
		took = append(took, time.Since(start))
	}
	slices.Sort(took)
	return took[1]
}
