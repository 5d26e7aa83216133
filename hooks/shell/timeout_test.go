package shell

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/hooks"
	"github.com/agenttree/agenttree/hooks/hookstest"
	"github.com/agenttree/agenttree/stages"
	"github.com/agenttree/agenttree/stages/load"
)

// waitForCIScript is the script alternative of docs/CONFIG.md's `run`: a
// script at a controller stage that waits for CI itself. It polls a file
// the test writes where the original asks `gh pr checks`, which needs
// GitHub.
const waitForCIScript = `
          # Wait for CI (simple script approach)
          pr_number={{pr_number}}
          for i in $(seq 1 90); do
            status=$(cat ci-state 2>/dev/null)
            if [ "$status" = "FAILURE" ]; then
              echo "CI failed on PR $pr_number"
              exit 1
            fi
            if [ "$status" = "SUCCESS" ]; then
              exit 0  # Success
            fi
            sleep 1
          done
          echo "CI timeout"
          exit 1`

// scriptPipeline puts the script at implementation_review, a stage the
// controller runs (host: controller), or at an agent's stage.
func scriptPipeline(controller bool, ciPolling string) string {
	host := ""
	if controller {
		host = "    host: controller\n"
	}
	return ciPolling + `stages:
  - name: implement
  - name: implementation_review
    human_review: true
` + host + `    post_start:
      - run: |` + waitForCIScript + `
  - name: accepted
    terminal: completion
`
}

// runScript loads pipeline and runs its script for an issue at
// implementation_review, whose CI turns green after ciDone (never if 0).
func runScript(t *testing.T, pipeline string, ciDone time.Duration) (hooks.Outcome, time.Duration) {
	t.Helper()
	cfg, err := load.Parse(stages.FileName, []byte(pipeline), registry())
	require.NoError(t, err)
	node, ok := cfg.Node("implementation_review")
	require.True(t, ok)
	entries := node.Entering(nil)
	require.Len(t, entries, 1)
	issue := hookstest.NewIssue(t)
	issue.Stage, issue.PRNumber, issue.WorkDir = "implementation_review", 12, t.TempDir()
	if ciDone > 0 {
		timer := time.AfterFunc(ciDone, func() {
			_ = os.WriteFile(filepath.Join(issue.WorkDir, "ci-state"), []byte("SUCCESS\n"), 0o644)
		})
		t.Cleanup(func() { timer.Stop() })
	}
	start := time.Now()
	o := registry().Run(context.Background(), entries[0], issue, &hooks.Env{Config: cfg})
	return o, time.Since(start)
}

// A `run` at a stage the controller runs may take as long as CI
// (ci_polling.timeout_s): the script that waits for CI itself passes when
// CI does, past the 30s an agent's gate gets. At an agent's stage the same
// script is stopped at 30s, with what to set.
func TestRunTimeoutOfAScriptThatWaitsForCI(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a script for more than 30s")
	}
	t.Parallel()
	ciTakes := agentTimeout + 3*time.Second
	t.Run("a controller stage waits as long as CI may take", func(t *testing.T) {
		t.Parallel()
		o, took := runScript(t, scriptPipeline(true, ""), ciTakes)
		require.Equal(t, hooks.KindPass, o.Kind, o.Reason)
		assert.GreaterOrEqual(t, took, ciTakes)
	})
	t.Run("an agent's stage keeps 30s", func(t *testing.T) {
		t.Parallel()
		o, took := runScript(t, scriptPipeline(false, ""), ciTakes)
		require.Equal(t, hooks.KindFail, o.Kind)
		assert.Equal(t, hooks.ClassTimeout, o.Class)
		assert.Less(t, took, ciTakes)
		assert.Contains(t, o.Reason, "timed out after 30s")
		assert.Contains(t, o.Reason, "The limit was 30s (the default at a stage an agent works in). "+
			"If the command needs longer (a script that waits for CI itself), set `timeout:` on the hook (.agenttree.yaml:")
	})
}

// The controller stage's limit is ci_polling.timeout_s: shortened in the
// config, the script is stopped then, and the message names the keys.
func TestRunTimeoutAtAControllerStageIsCIs(t *testing.T) {
	t.Parallel()
	o, took := runScript(t, scriptPipeline(true, "ci_polling:\n  timeout_s: 2\n"), 0)
	require.Equal(t, hooks.KindFail, o.Kind, o.Reason)
	assert.Equal(t, hooks.ClassTimeout, o.Class)
	assert.Less(t, took, 10*time.Second)
	first, _, _ := strings.Cut(o.Reason, "\n")
	assert.Contains(t, first, "failed (timed out after 2s, timeout)")
	assert.Contains(t, o.Reason, "The limit was 2s (ci_polling.timeout_s, the default at a stage the controller runs). "+
		"If the command needs longer (a script that waits for CI itself), set `timeout:` on the hook (.agenttree.yaml:")
	assert.Contains(t, o.Reason, "e.g. `- run: {command: ..., timeout: 30m}`; 0 means no limit of its own.")
}

// The hook's own `timeout` wins over the stage's default.
func TestRunTimeoutOfTheHookWins(t *testing.T) {
	t.Parallel()
	pipeline := strings.Replace(scriptPipeline(true, "ci_polling:\n  timeout_s: 600\n"), "  - name: accepted", "        timeout: 1\n  - name: accepted", 1)
	o, took := runScript(t, pipeline, 0)
	require.Equal(t, hooks.KindFail, o.Kind, o.Reason)
	assert.Less(t, took, 10*time.Second)
	assert.Contains(t, o.Reason, "failed (timed out after 1s, timeout)")
	assert.Contains(t, o.Reason, "The limit was 1s (its `timeout`).")
}
