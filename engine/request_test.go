package engine_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/hooks/builtin"
	"github.com/agenttree/agenttree/internal/testpipeline"
	"github.com/agenttree/agenttree/stages"
	"github.com/agenttree/agenttree/stages/load"
)

// nextEnv, set to "DIR ISSUE REQUEST", makes the test binary another
// agenttree process: it runs an agent's next with that request id on the
// issue in DIR's store and prints the Result's status.
const nextEnv = "ENGINE_TEST_NEXT"

func TestMain(m *testing.M) {
	if v := os.Getenv(nextEnv); v != "" {
		status, err := nextAsProcess(strings.Fields(v))
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Print(status)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func nextAsProcess(args []string) (engine.Status, error) {
	dir, request := args[0], args[2]
	id, err := strconv.Atoi(args[1])
	if err != nil {
		return "", err
	}
	e, err := openEngine(dir)
	if err != nil {
		return "", err
	}
	res, err := e.Next(context.Background(), id, engine.Actor{Kind: engine.ActorAgent, Role: "developer", Request: request}, false)
	if err != nil {
		return "", err
	}
	return res.Status, nil
}

// openEngine is an engine of its own over the config and store in dir,
// as another process opens them.
func openEngine(dir string) (*engine.Engine, error) {
	reg := builtin.Registry()
	cfg, err := load.File(filepath.Join(dir, stages.FileName), reg)
	if err != nil {
		return nil, err
	}
	store, err := issues.Open(filepath.Join(dir, "_agenttree"))
	if err != nil {
		return nil, err
	}
	return engine.New(cfg, store, reg, nil), nil
}

// draftReady is an engine over the planned pipeline, with an issue at
// plan.draft whose plan is written: an agent's next moves it on.
func draftReady(t *testing.T) (*engine.Engine, *issues.Issue) {
	t.Helper()
	e := newEngine(t, testpipeline.Read(t, "planned"))
	iss := create(t, e, "plan.draft", nil)
	write(t, e, iss.ID, "plan.md", "# Plan\n")
	return e, iss
}

// requested counts the history entries of iss that request wrote.
func requested(iss *issues.Issue, request string) int {
	n := 0
	for _, h := range iss.History {
		if h.Request == request {
			n++
		}
	}
	return n
}

func TestARequestDoneBeforeIsToldWhatItDidAndChangesNothing(t *testing.T) {
	e, iss := draftReady(t)
	ctx := context.Background()
	asked := engine.Actor{Kind: engine.ActorAgent, Role: "developer", Request: "req-1"}

	first, err := e.Next(ctx, iss.ID, asked, false)
	require.NoError(t, err)
	require.Equal(t, engine.StatusAdvanced, first.Status, first.Reasons)
	require.Equal(t, "plan.review", first.To)
	moved, err := e.Store.Get(iss.ID)
	require.NoError(t, err)

	for _, dryRun := range []bool{false, true} {
		again, err := e.Next(ctx, iss.ID, asked, dryRun)
		require.NoError(t, err)
		assert.Equal(t, engine.StatusDone, again.Status, "dry run %v: %v", dryRun, again.Reasons)
		require.NotNil(t, again.Done)
		assert.Equal(t, "plan.draft", again.Done.Entry.From)
		assert.Equal(t, "plan.review", again.Done.Entry.To)
		assert.Equal(t, stages.MoveAdvance, again.Done.Entry.Kind)
		assert.Equal(t, "req-1", again.Done.Entry.Request)
		assert.Equal(t, "plan.review", again.Done.Stage)
		assert.Equal(t, moved.Version, again.Version)
		// The people's report says what the request did; the controller
		// is told nothing moved this time.
		assert.Equal(t, "plan.draft", again.From)
		assert.Equal(t, "plan.review", again.To)
		assert.Equal(t, engine.StatusDone, again.Outcome.Status)
		assert.False(t, again.Outcome.Moved, "dry run %v: a retry moves nothing", dryRun)
		assert.NotContains(t, again.Outcome.Summary, "moved")
		assert.Equal(t, moved.Version, again.Outcome.Version)
	}
	got, err := e.Store.Get(iss.ID)
	require.NoError(t, err)
	assert.Equal(t, moved.Version, got.Version, "a retry writes nothing")
	assert.Len(t, got.History, len(moved.History))
	assert.Equal(t, 1, requested(got, "req-1"))

	// Another request is no retry: at the review an agent waits.
	res, err := e.Next(ctx, iss.ID, engine.Actor{Kind: engine.ActorAgent, Role: "developer", Request: "req-2"}, false)
	require.NoError(t, err)
	assert.Equal(t, engine.StatusWaiting, res.Status)
	assert.Nil(t, res.Done)
}

// TestARequestRacedMovesOnce sends one request from goroutines, each with
// an engine and store of its own, as the controller's retries of one
// agent's next would: the issue's lock decides, and the request moves the
// issue once.
func TestARequestRacedMovesOnce(t *testing.T) {
	e, iss := draftReady(t)
	dir := filepath.Dir(e.Config.File)
	const racers = 6
	statuses := make([]engine.Status, racers)
	var wg sync.WaitGroup
	for i := range racers {
		own, err := openEngine(dir)
		require.NoError(t, err)
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := own.Next(context.Background(), iss.ID, engine.Actor{Kind: engine.ActorAgent, Role: "developer", Request: "race"}, false)
			if assert.NoError(t, err) {
				statuses[i] = res.Status
			}
		}()
	}
	wg.Wait()
	assertMovedOnce(t, e, iss, statuses)
}

// TestARequestRacedByProcessesMovesOnce is the race between agenttree
// processes: each holds the issue's lock through the file system.
func TestARequestRacedByProcessesMovesOnce(t *testing.T) {
	e, iss := draftReady(t)
	bin, err := os.Executable()
	require.NoError(t, err)
	const racers = 4
	cmds := make([]*exec.Cmd, racers)
	outs := make([]strings.Builder, racers)
	for i := range cmds {
		cmds[i] = exec.Command(bin)
		cmds[i].Env = append(os.Environ(), fmt.Sprintf("%s=%s %d race", nextEnv, filepath.Dir(e.Config.File), iss.ID))
		cmds[i].Stdout, cmds[i].Stderr = &outs[i], &outs[i]
		require.NoError(t, cmds[i].Start())
	}
	statuses := make([]engine.Status, racers)
	for i, cmd := range cmds {
		require.NoError(t, cmd.Wait(), outs[i].String())
		statuses[i] = engine.Status(outs[i].String())
	}
	assertMovedOnce(t, e, iss, statuses)
}

// assertMovedOnce checks that of the racers' statuses one moved the issue
// and every other was told it was done, and that the issue moved once.
func assertMovedOnce(t *testing.T, e *engine.Engine, before *issues.Issue, statuses []engine.Status) {
	t.Helper()
	moved := 0
	for _, s := range statuses {
		switch s {
		case engine.StatusAdvanced:
			moved++
		default:
			assert.Equal(t, engine.StatusDone, s, "all: %v", statuses)
		}
	}
	assert.Equal(t, 1, moved, "all: %v", statuses)
	got, err := e.Store.Get(before.ID)
	require.NoError(t, err)
	assert.Equal(t, "plan.review", got.Stage)
	assert.Equal(t, 1, requested(got, "race"))
	assert.Len(t, got.History, len(before.History)+1)
	assert.Equal(t, before.Version+1, got.Version)
}
