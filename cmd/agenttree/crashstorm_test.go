package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/internal/gittest"
	"github.com/agenttree/agenttree/internal/gitx"
	"github.com/agenttree/agenttree/stages"
)

// stormEnv sets the crash storm's number of transitions: the default run
// makes stormShort, which stays within about a minute on two busy cores;
// the reliability run makes 500 (bench/README.md, "The crash storm"):
//
//	AGENTTREE_STORM=500 go test ./cmd/agenttree -run TestCrashStorm -v -timeout 60m
//
// AGENTTREE_STORM_SEED repeats a run's random choices.
const stormEnv = "AGENTTREE_STORM"

const (
	stormShort = 40
	// stormLanes is how many issues are in flight at once: enough that
	// the controller's passes, CI runs and deliveries overlap, and a kill
	// cuts one issue's work while another's is half done.
	stormLanes = 4
	// killChance is how often a person's or an agent's command is given
	// a kill, at a random point of its window.
	killChance = 0.5
	// stormWithin bounds the wait for any issue to need its agent or its
	// person: its pass is cut short by kills again and again, on a loaded
	// machine.
	stormWithin = 3 * time.Minute
)

// TestCrashStorm drives issues through the reference pipeline (the
// agent's work and `next` in its worktree, the controller's PR and CI, a
// CI failure now and then that steps the issue back with a message typed
// into the agent's pane, a person's `approve` and the merge) while
// `next`, `approve` and the controller are SIGKILLed at random points,
// each killed command run again as its user would and each controller
// replaced. Afterwards every issue verifies, its version is its log's
// lines, every PR was opened and merged once, and every message reached
// its pane once.
func TestCrashStorm(t *testing.T) {
	want := stormShort
	if v := os.Getenv(stormEnv); v != "" {
		n, err := strconv.Atoi(v)
		require.NoError(t, err, "%s=%q is not a number of transitions", stormEnv, v)
		want = n
	}
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv(stormEnv + "_SEED"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		require.NoError(t, err, "%s_SEED=%q", stormEnv, v)
		seed = n
	}
	t.Logf("random seed %d (%s_SEED=%d repeats the choices); %d transitions", seed, stormEnv, seed, want)
	began := time.Now()

	s := newStorm(t, seed)
	s.run(t, want)
	k := s.killer
	k.stop(t)
	s.settle(t)
	got := s.check(t)
	t.Logf("crash storm: %d transitions (%d versions, one log line each) over %d issues in %s; kills: %s, %d controllers (lives up to %s); "+
		"verify clean on %d issues and %d forge records; %d step backs and %d messages typed once each; %d PRs opened once, %d merged once",
		got.transitions, got.versions, len(s.issues), time.Since(began).Round(time.Second), s.killsSaid(), k.kills.Load(),
		time.Duration(k.longest.Load()).Round(time.Millisecond), got.verified, got.records, got.stepBacks, got.typed, got.prs, got.merges)
	assert.GreaterOrEqual(t, got.transitions, want)
}

// storm is the crash storm's rig, its issues and what it has done.
type storm struct {
	r      *rig
	rng    *rand.Rand
	killer *killer
	issues []*stormIssue
	// window is, for each kind of command, how long after its start a
	// kill may fall: three of its dry runs' time on this machine as
	// loaded now, as TestNextSurvivesSIGKILL measures it.
	window map[string]time.Duration
	kills  map[string]*killCount
	// base is origin's main before the storm.
	base string
	// planned counts the transitions the issues opened plan.
	planned int
}

// stormIssue is one issue of the storm and its agent's plan.
type stormIssue struct {
	id                         int
	worktree, branch, received string
	// fails is how many times the agent pushes work that fails CI;
	// pushed is how many times it has pushed work.
	fails, pushed int
	// approveAgain: the person's last approve was killed or did not
	// finish the merge, so the person runs it again while the merge is
	// left to do; approvals counts the person's approves.
	approveAgain bool
	approvals    int
	done         bool
}

// killCount counts the runs of one kind of command.
type killCount struct{ runs, killed, finishedFirst, again int }

func newStorm(t *testing.T, seed uint64) *storm {
	t.Helper()
	r := newRig(t, "controller")
	s := &storm{r: r, rng: rand.New(rand.NewPCG(seed, 1)), window: map[string]time.Duration{},
		kills: map[string]*killCount{"next": {}, "approve": {}}, base: gittest.Run(t, r.bare(), "rev-parse", "main")}
	// The controller's life is drawn from a window measured on real
	// work: the first issue taken to pr_ready, and the pass that opens
	// its PR and starts its CI. Four times over, so that most passes
	// (a rebase takes longer) are cut short somewhere, and some are not.
	first := s.open(t)
	s.commit(t, first)
	for range 2 {
		res, _ := s.start(t, nil, "next", first.worktree, processEnv("AGENTTREE_ROLE=developer"), "next")
		require.Equal(t, exitOK, res.code, "stdout %s stderr %s", res.stdout, res.stderr)
	}
	began := time.Now()
	res := r.runProcess(t, processEnv(), "controller", "--once")
	require.Equal(t, exitOK, res.code, "stdout %s stderr %s", res.stdout, res.stderr)
	pass := time.Since(began)
	life := 4 * pass
	t.Logf("a controller lives up to %s (4 × %s, the pass that opened issue %d's PR)", life, pass, first.id)
	s.killer = startKillerWithin(t, r, rand.New(rand.NewPCG(seed, 2)), life, s.progressed())
	return s
}

// progressed reports, each time it is called, whether a controller
// polled an issue or delivered a message since the last call, as its log
// says.
func (s *storm) progressed() func() bool {
	var read int64
	return func() bool {
		f, err := os.Open(s.r.log.Name())
		if err != nil {
			return false
		}
		defer f.Close()
		data, err := io.ReadAll(io.NewSectionReader(f, read, 1<<40))
		if err != nil {
			return false
		}
		read += int64(len(data))
		return bytes.Contains(data, []byte("msg=poll ")) || bytes.Contains(data, []byte(`msg="message delivered"`))
	}
}

// run opens issues, stormLanes at a time, until they plan want
// transitions, and does their agents' and person's work until all are
// accepted.
func (s *storm) run(t *testing.T, want int) {
	t.Helper()
	for {
		active := slices.DeleteFunc(slices.Clone(s.issues), func(it *stormIssue) bool { return it.done })
		for s.planned < want && len(active) < stormLanes {
			active = append(active, s.open(t))
		}
		if len(active) == 0 {
			return
		}
		var due *stormIssue
		var iss *issues.Issue
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			due, iss = nil, nil
			var waiting []string
			for _, it := range active {
				got, err := s.r.issues.Get(it.id)
				require.NoError(c, err)
				require.Nilf(c, got.Escalated, "issue %d stopped for a person: %s", it.id, describe(got))
				if s.turn(it, got) {
					due, iss = it, got
					return
				}
				if !it.done {
					waiting = append(waiting, describe(got))
				}
			}
			// All accepted: the next issues are opened.
			require.Emptyf(c, waiting, "no issue needs its agent or its person")
		}, stormWithin, lookEvery)
		if due != nil {
			s.act(t, due, iss)
		}
	}
}

// open creates an issue at implement.code, its agent's worktree on its
// branch and the tmux session its messages are typed into, and draws how
// often its agent's work fails CI: at most twice, under the pipeline's
// budget and circuit breaker (three).
func (s *storm) open(t *testing.T) *stormIssue {
	t.Helper()
	id := s.r.create(t, fmt.Sprintf("Storm %d", len(s.issues)+1), "--stage", "implement.code")
	it := &stormIssue{id: id, worktree: filepath.Join(t.TempDir(), "agent"), branch: s.r.issue(t, id).Branch}
	gittest.Run(t, s.r.dir, "worktree", "add", "-q", "-b", it.branch, it.worktree, "main")
	it.received = s.r.tmux.startAgent(t, agentSession(id))
	switch x := s.rng.Float64(); {
	case x < 0.15:
		it.fails = 2
	case x < 0.45:
		it.fails = 1
	}
	// code → feedback → pr_ready, back and forth per failure, then
	// review and accepted.
	s.planned += 4 + 2*it.fails
	s.issues = append(s.issues, it)
	return it
}

// turn reports whether issue it, as iss, waits for its agent or its
// person; an accepted issue with its merge done is marked done.
func (s *storm) turn(it *stormIssue, iss *issues.Issue) bool {
	switch iss.Stage {
	case "implement.code", "implement.feedback", "implementation_review":
		return true
	case "accepted":
		if iss.EntryPending == nil {
			it.done = true
			return false
		}
		// The merge did not finish: the person's approve was killed or
		// failed; the controller tries again too.
		return it.approveAgain
	}
	return false
}

// act does the agent's or the person's part at iss's stage.
func (s *storm) act(t *testing.T, it *stormIssue, iss *issues.Issue) {
	t.Helper()
	agent := processEnv("AGENTTREE_ROLE=developer")
	switch iss.Stage {
	case "implement.code", "implement.feedback":
		// Work after a step back must be new (has_commits), and is
		// pushed by the controller's create_pr.
		if iss.Stage == "implement.code" || moves(iss, stages.MoveStepBack) >= it.pushed {
			s.commit(t, it)
		}
		s.runUntilDone(t, it, iss, "next", it.worktree, agent, "next")
	case "implementation_review", "accepted":
		it.approvals++
		require.Less(t, it.approvals, 20, "issue %d: approved again and again: %s", it.id, describe(iss))
		s.runUntilDone(t, it, iss, "approve", s.r.dir, processEnv(), "approve", itoa(it.id))
	}
}

// commit is the agent's work for its next push: a file of its own, and
// ok.txt (what CI wants) once the failures it plans are spent. First it
// pulls what agenttree pushed to its branch (a rebase it is told of), as
// the message asks.
func (s *storm) commit(t *testing.T, it *stormIssue) {
	t.Helper()
	git := &gitx.Repo{Dir: it.worktree, Env: gittest.Env()}
	tracking := "refs/remotes/origin/" + it.branch
	if _, err := git.Run(t.Context(), "fetch", "-q", "origin", "+refs/heads/"+it.branch+":"+tracking); err == nil {
		if in, err := git.IsAncestor(t.Context(), tracking, "HEAD"); err == nil && !in {
			gittest.Run(t, it.worktree, "rebase", "-q", tracking)
			t.Logf("issue %d: the agent pulled its branch, rebased by agenttree", it.id)
		}
	}
	it.pushed++
	name := fmt.Sprintf("work-%d-%d.txt", it.id, it.pushed)
	gittest.Commit(t, it.worktree, name, name+"\n", "work "+name)
	if it.pushed > it.fails {
		if _, err := os.Stat(filepath.Join(it.worktree, "ok.txt")); err != nil {
			gittest.Commit(t, it.worktree, "ok.txt", "ok\n", "make CI pass")
		}
	}
	t.Logf("issue %d: the agent's work %d, head %s", it.id, it.pushed, gittest.Run(t, it.worktree, "rev-parse", "--short=12", "HEAD"))
}

// runUntilDone runs the command, killed at a random point now and then,
// and runs it again while the issue's log says the kill came before its
// move, as its user would.
func (s *storm) runUntilDone(t *testing.T, it *stormIssue, iss *issues.Issue, kind, dir string, env []string, args ...string) {
	t.Helper()
	if _, ok := s.window[kind]; !ok {
		dry := exec.Command(binary, append(slices.Clone(args), "--dry-run")...)
		dry.Dir, dry.Env = dir, env
		s.window[kind] = 3 * runTime(t, dry)
		t.Logf("a %s is killed up to %s after its start (3 dry runs)", kind, s.window[kind])
	}
	count := s.kills[kind]
	from := iss.Stage
	for attempt := 0; ; attempt++ {
		require.Less(t, attempt, 20, "issue %d: %s run again and again: %s", it.id, kind, describe(iss))
		before := len(logMoves(t, s.r.hostDir(it.id)))
		res, killed := s.start(t, count, kind, dir, env, args...)
		t.Logf("issue %d at %s (version %d): %s killed %v, exit %d: %s", it.id, from, iss.Version, kind, killed, res.code, strings.TrimSpace(res.stdout))
		if killed {
			if slices.ContainsFunc(logMoves(t, s.r.hostDir(it.id))[before:], func(h issues.HistoryEntry) bool { return h.From == from }) {
				// The kill came after the move was logged; an approve
				// may have been killed before its merge.
				it.approveAgain = kind == "approve"
				return
			}
			count.again++
			continue
		}
		switch {
		case res.code == exitOK:
			it.approveAgain = false
		case kind == "approve" && res.code == exitBlocked && strings.Contains(res.stdout, "did not finish"):
			// The merge was refused for now (the base moved under it
			// again and again): the person tries again.
			it.approveAgain = true
		case kind == "approve" && from == "accepted" && s.merged(t, it):
			// The controller finished the merge first: nothing to approve.
			it.approveAgain = false
		default:
			require.Failf(t, "a command failed", "issue %d: %s exited %d: stdout %s stderr %s", it.id, kind, res.code, res.stdout, res.stderr)
		}
		return
	}
}

// merged reports whether issue it is accepted with its merge done.
func (s *storm) merged(t *testing.T, it *stormIssue) bool {
	t.Helper()
	iss, err := s.r.issues.Get(it.id)
	require.NoError(t, err)
	return iss.Stage == "accepted" && iss.EntryPending == nil
}

// start runs the built agenttree in dir and, with killChance, SIGKILLs it
// at a random point of its kind's window; killed reports whether the
// kill came before it ended. With count nil it is not killed.
func (s *storm) start(t *testing.T, count *killCount, kind, dir string, env []string, args ...string) (res cliResult, killed bool) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Dir, cmd.Env = dir, env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	aim := count != nil && s.rng.Float64() < killChance
	at := time.Duration(s.rng.Int64N(int64(s.window[kind]) + 1))
	if count == nil {
		count = &killCount{}
	}
	count.runs++
	require.NoError(t, cmd.Start())
	var kill, hung *time.Timer
	if aim {
		kill = time.AfterFunc(at, func() { _ = cmd.Process.Signal(syscall.SIGKILL) })
	}
	// A command that never ends fails the test instead of hanging it.
	hung = time.AfterFunc(2*settleWithin, func() { _ = cmd.Process.Kill() })
	err := cmd.Wait()
	require.True(t, hung.Stop(), "agenttree %s did not end within %s and was killed", strings.Join(args, " "), 2*settleWithin)
	if kill != nil {
		kill.Stop()
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			require.Equal(t, syscall.SIGKILL, ws.Signal(), "agenttree %s", strings.Join(args, " "))
			count.killed++
			return cliResult{}, true
		}
	} else {
		require.NoError(t, err)
	}
	if aim {
		count.finishedFirst++
	}
	return cliResult{code: cmd.ProcessState.ExitCode(), stdout: stdout.String(), stderr: stderr.String()}, false
}

// killsSaid is what the kills of the people's and agents' commands were.
func (s *storm) killsSaid() string {
	var parts []string
	for _, kind := range []string{"next", "approve"} {
		c := s.kills[kind]
		parts = append(parts, fmt.Sprintf("%d %s (of %d runs; %d more finished first; %d run again)", c.killed, kind, c.runs, c.finishedFirst, c.again))
	}
	return strings.Join(parts, ", ")
}
