package main

import (
	"bytes"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/controller/api"
	"github.com/agenttree/agenttree/internal/gittest"
	"github.com/agenttree/agenttree/internal/statedir"
)

// The controller is killed (SIGKILL) and started again while agents' `next`
// requests are in flight: every request ends with an answer or a clear
// refusal, and none is applied twice (a retry of a request the dead
// controller applied is told so, not applied again).
func TestAgentsRequestsSurviveAControllerKilledAndRestarted(t *testing.T) {
	r := newRig(t, "controller")
	id := r.create(t, "Add checkout page", "--stage", "implement.feedback")
	r.checkoutAndCommit(t, id)
	layout := statedir.Layout{Root: filepath.Join(r.dir, "_agenttree")}
	tok := r.run(t, humanEnv, "token", itoa(id), "--role", "developer")
	require.Equal(t, exitOK, tok.code, tok.stderr)
	env := processEnv("AGENTTREE_TOKEN="+strings.TrimSpace(tok.stdout), "AGENTTREE_SOCKET="+layout.Socket())

	rng := rand.New(rand.NewPCG(8, 8))
	ctl := r.startController(t)
	answered := map[int]int{}
	retried := 0
	for round := range 12 {
		if stage := r.issue(t, id).Stage; stage != "implement.feedback" {
			res := r.run(t, humanEnv, "move", itoa(id), "implement.feedback", "--reason", "round "+itoa(round))
			require.Equal(t, exitOK, res.code, res.stderr)
		}
		agent := r.command(env, "next")
		var stdout, stderr bytes.Buffer
		agent.Stdout, agent.Stderr = &stdout, &stderr
		require.NoError(t, agent.Start())
		time.Sleep(time.Duration(rng.IntN(80)) * time.Millisecond)
		require.NoError(t, ctl.Process.Signal(syscall.SIGKILL))
		_ = ctl.Wait()
		ctl = r.startController(t)
		code := wait(t, agent)
		answered[code]++
		switch code {
		case exitOK:
			if strings.Contains(stdout.String(), "already done") {
				retried++
			}
			assert.Regexp(t, `implement\.feedback → pr_ready|already done`, stdout.String(), "round %d", round)
		case exitWaiting, exitBlocked:
			assert.NotEmpty(t, stderr.String()+stdout.String(), "round %d: a refusal says why", round)
		default:
			t.Errorf("round %d: exit %d: stdout %s stderr %s", round, code, stdout.String(), stderr.String())
		}
	}
	require.Eventually(t, func() bool {
		conn, err := api.Dial(t.Context(), layout.Socket())
		if err == nil {
			conn.Close()
		}
		return err == nil
	}, settleWithin, 20*time.Millisecond, "the last controller listens")
	// The same request sent again, as a client does when the controller
	// died before answering: told, not applied.
	if r.issue(t, id).Stage != "implement.feedback" {
		res := r.run(t, humanEnv, "move", itoa(id), "implement.feedback", "--reason", "again")
		require.Equal(t, exitOK, res.code, res.stderr)
	}
	gittest.Commit(t, r.dir, "more.txt", "more\n", "more work")
	client := api.NewClient(layout.Socket(), strings.TrimSpace(tok.stdout))
	req := api.NextRequest{RequestID: "same-request"}
	first, err := client.Do(t.Context(), api.RouteNext, req)
	require.NoError(t, err)
	assert.Contains(t, first.Text, "implement.feedback → pr_ready")
	version := r.issue(t, id).Version
	res := r.run(t, humanEnv, "move", itoa(id), "implement.feedback", "--reason", "so that a second apply would show")
	require.Equal(t, exitOK, res.code, res.stderr)
	second, err := client.Do(t.Context(), api.RouteNext, req)
	require.NoError(t, err)
	assert.Contains(t, second.Text, "already done")
	assert.Equal(t, version+1, r.issue(t, id).Version, "the retry changed nothing")
	assert.Equal(t, "implement.feedback", r.issue(t, id).Stage)

	stopController(t, ctl)
	t.Logf("exit codes: %v; retries told the request was done: %d", answered, retried)

	requests := map[string]int{}
	for _, h := range r.issue(t, id).History {
		if h.Request != "" {
			requests[h.Request]++
		}
	}
	assert.NotEmpty(t, requests, "some requests moved the issue")
	for req, n := range requests {
		assert.Equal(t, 1, n, "request %s applied %d times", req, n)
	}
}
