package shell

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/hooks"
	"github.com/agenttree/agenttree/hooks/hookstest"
	"github.com/agenttree/agenttree/internal/proc"
	"github.com/agenttree/agenttree/stages"
)

func TestRunOutcomes(t *testing.T) {
	tests := []struct {
		name    string
		params  hooks.Params
		kind    hooks.Kind
		class   hooks.Class
		reason  []string
		outputs map[string]string
		maxTime time.Duration // 0: no check
	}{
		{name: "success with a JSON last line",
			params: hooks.Params{"command": `echo building; echo '{"coverage": 85.5, "name": "x", "ok": true, "list": [1, 2]}'; echo`},
			kind:   hooks.KindPass,
			outputs: map[string]string{"coverage": "85.5", "name": "x", "ok": "true", "list": "[1, 2]", "exit_status": "0",
				"output_tail": "building\n" + `{"coverage": 85.5, "name": "x", "ok": true, "list": [1, 2]}`}},
		{name: "success without JSON", params: hooks.Params{"command": "echo 'not {json'"}, kind: hooks.KindPass,
			outputs: map[string]string{"exit_status": "0", "output_tail": "not {json"}},
		{name: "failure with the output tail", params: hooks.Params{"command": "echo line1; echo oops >&2; exit 2"},
			kind: hooks.KindFail, class: hooks.ClassGeneral,
			reason:  []string{"command \"echo line1; echo oops >&2; exit 2\" failed (exit 2, general):\nline1\noops"},
			outputs: map[string]string{"exit_status": "2", "output_tail": "line1\noops"}},
		{name: "JSON outputs on failure too", params: hooks.Params{"command": `echo '{"failed": 3}'; exit 1`},
			kind: hooks.KindFail, class: hooks.ClassGeneral, outputs: map[string]string{"failed": "3", "exit_status": "1"}},
		{name: "only the last 20 lines", params: hooks.Params{"command": "seq 1 30; exit 1"}, kind: hooks.KindFail, class: hooks.ClassGeneral,
			reason: []string{"(exit 1, general):\n11\n12\n"}},
		{name: "no output", params: hooks.Params{"command": "exit 3"}, kind: hooks.KindFail, class: hooks.ClassGeneral,
			reason: []string{`command "exit 3" failed (exit 3, general) with no output`}},
		{name: "huge output keeps the tail",
			params: hooks.Params{"command": `head -c 300000 /dev/zero | tr '\0' a; echo; echo '{"k": "v"}'`}, kind: hooks.KindPass,
			outputs: map[string]string{"k": "v"}},
		{name: "timeout kills the process group", params: hooks.Params{"command": "echo started; sleep 100 & sleep 5", "timeout": 200 * time.Millisecond},
			kind: hooks.KindFail, class: hooks.ClassTimeout, maxTime: 2 * time.Second,
			reason: []string{`failed (timed out after 200ms, timeout):` + "\nstarted"}},
		{name: "exit 124 is a timeout", params: hooks.Params{"command": "echo 'timeout: sending signal'; exit 124"},
			kind: hooks.KindFail, class: hooks.ClassTimeout, reason: []string{"(exit 124, timeout)"}},
		{name: "auth: git over https", params: hooks.Params{"command": "echo \"fatal: Authentication failed for 'https://github.com/x/y'\"; exit 128"},
			kind: hooks.KindFail, class: hooks.ClassAuth, reason: []string{"(exit 128, auth)"}},
		{name: "auth: ssh", params: hooks.Params{"command": "echo 'git@github.com: Permission denied (publickey).' >&2; exit 128"},
			kind: hooks.KindFail, class: hooks.ClassAuth},
		{name: "auth: bad credentials", params: hooks.Params{"command": "echo 'gh: Bad credentials (HTTP 401)'; exit 1"},
			kind: hooks.KindFail, class: hooks.ClassAuth},
		{name: "auth: 403 forbidden", params: hooks.Params{"command": "echo 'HTTP/2 403 Forbidden'; exit 1"},
			kind: hooks.KindFail, class: hooks.ClassAuth},
		{name: "auth: curl status", params: hooks.Params{"command": "echo 'The requested URL returned error: 401'; exit 22"},
			kind: hooks.KindFail, class: hooks.ClassAuth},
		{name: "rate limit", params: hooks.Params{"command": "echo 'API rate limit exceeded for user'; exit 1"},
			kind: hooks.KindFail, class: hooks.ClassRateLimit, reason: []string{"(exit 1, rate_limit)"}},
		{name: "rate limit: 429", params: hooks.Params{"command": "echo 'error: 429 Too Many Requests'; exit 1"},
			kind: hooks.KindFail, class: hooks.ClassRateLimit},
		{name: "rate limit: HTTP 429 alone", params: hooks.Params{"command": "echo 'got HTTP 429'; exit 1"},
			kind: hooks.KindFail, class: hooks.ClassRateLimit},
		{name: "secondary rate limit beats 403", params: hooks.Params{"command": "echo '403 Forbidden: You have exceeded a secondary rate limit'; exit 1"},
			kind: hooks.KindFail, class: hooks.ClassRateLimit},
		{name: "docker pull limit", params: hooks.Params{"command": "echo 'toomanyrequests: You have reached your pull rate limit.'; exit 1"},
			kind: hooks.KindFail, class: hooks.ClassRateLimit},
		{name: "tests about rate limits and auth are general", params: hooks.Params{"command": "echo '--- FAIL: TestRateLimit'; echo 'FAILED test_unauthorized_login'; exit 1"},
			kind: hooks.KindFail, class: hooks.ClassGeneral},
		{name: "numbers that are not statuses", params: hooks.Params{"command": "echo '401 tests passed, 429 skipped'; exit 1"},
			kind: hooks.KindFail, class: hooks.ClassGeneral},
		{name: "stdin is closed", params: hooks.Params{"command": "cat; echo read-eof"}, kind: hooks.KindPass,
			outputs: map[string]string{"output_tail": "read-eof"}, maxTime: 2 * time.Second},
		{name: "background grandchild does not hang a success", params: hooks.Params{"command": "sleep 100 & echo done"},
			kind: hooks.KindPass, outputs: map[string]string{"output_tail": "done"}, maxTime: 3 * time.Second},
		{name: "background grandchild does not hang a failure", params: hooks.Params{"command": "sleep 100 & exit 1"},
			kind: hooks.KindFail, class: hooks.ClassGeneral, maxTime: 3 * time.Second},
		{name: "timeout 0 means no limit of its own", params: hooks.Params{"command": "true", "timeout": time.Duration(0)}, kind: hooks.KindPass},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			issue := hookstest.NewIssue(t)
			issue.WorkDir = t.TempDir()
			start := time.Now()
			o := hookstest.Call(t, registry(), "run", issue, tt.params, nil)
			if tt.maxTime > 0 {
				assert.Less(t, time.Since(start), tt.maxTime)
			}
			assert.Equal(t, tt.kind, o.Kind, o.Reason)
			assert.Equal(t, tt.class, o.Class)
			for _, s := range tt.reason {
				assert.Contains(t, o.Reason, s)
			}
			for k, v := range tt.outputs {
				assert.Equal(t, v, o.Outputs[k], "output %s", k)
			}
			assert.Contains(t, o.Outputs, "exit_status")
			assert.Contains(t, o.Outputs, "output_tail")
		})
	}
}

func TestRunLeavesNothingRunning(t *testing.T) {
	tests := []struct {
		name     string
		command  string
		timeout  time.Duration
		kind     hooks.Kind
		survives bool
	}{
		{name: "timeout kills the group", command: "sleep 100 & echo $! > pid; wait", timeout: 200 * time.Millisecond, kind: hooks.KindFail},
		{name: "a background process holding the output is killed", command: "sleep 100 & echo $! > pid", kind: hooks.KindPass},
		{name: "a background process with its output redirected is killed", command: "sleep 100 >/dev/null 2>&1 & echo $! > pid", kind: hooks.KindPass},
		{name: "after a failure too", command: "sleep 100 & echo $! > pid; exit 1", kind: hooks.KindFail},
		{name: "a process that left the group survives", command: "setsid sleep 3 >/dev/null 2>&1 & echo $! > pid; sleep 0.3", kind: hooks.KindPass, survives: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if _, err := exec.LookPath("setsid"); err != nil && strings.HasPrefix(tt.command, "setsid") {
				t.Skip("no setsid")
			}
			issue := hookstest.NewIssue(t)
			issue.WorkDir = issue.Dir
			params := hooks.Params{"command": tt.command}
			if tt.timeout > 0 {
				params["timeout"] = tt.timeout
			}
			start := time.Now()
			o := hookstest.Call(t, registry(), "run", issue, params, nil)
			assert.Less(t, time.Since(start), 2*time.Second)
			require.Equal(t, tt.kind, o.Kind, o.Reason)
			data, err := os.ReadFile(filepath.Join(issue.Dir, "pid"))
			require.NoError(t, err)
			pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
			require.NoError(t, err)
			if tt.survives {
				assert.True(t, proc.Alive(pid))
				if p, err := os.FindProcess(pid); err == nil {
					_ = p.Kill()
				}
				return
			}
			assert.Eventually(t, func() bool { return !proc.Alive(pid) }, 2*time.Second, 20*time.Millisecond, "process %d still running", pid)
		})
	}
}

func TestRunEnvironmentAndDir(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	issueDir := filepath.Join(root, "_agenttree", "issues", "007")
	require.NoError(t, os.MkdirAll(issueDir, 0o755))
	work := t.TempDir()
	cmd := `echo "$AGENTTREE_ISSUE|$AGENTTREE_STAGE|$AGENTTREE_ISSUE_DIR|$(pwd -P)"`

	tests := []struct {
		name    string
		workDir string
		wantDir string
	}{
		{"work tree", work, work},
		{"repository of the issue directory", "", root},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			issue := &hooks.Issue{ID: 7, Stage: "implement.code", Dir: issueDir, WorkDir: tt.workDir}
			o := hookstest.Call(t, registry(), "run", issue, hooks.Params{"command": cmd}, nil)
			require.Equal(t, hooks.KindPass, o.Kind, o.Reason)
			want, err := filepath.EvalSymlinks(tt.wantDir)
			require.NoError(t, err)
			assert.Equal(t, "7|implement.code|"+issueDir+"|"+want, o.Outputs["output_tail"])
		})
	}
}

func TestRunDeadlines(t *testing.T) {
	t.Parallel()
	t.Run("entry timeout replaces the default", func(t *testing.T) {
		t.Parallel()
		params := hooks.Params{"command": "sleep 5"}
		start := time.Now()
		o := registry().Run(context.Background(), &stages.HookEntry{Name: "run", Params: params, Timeout: 200 * time.Millisecond},
			hookstest.NewIssue(t), nil)
		assert.Less(t, time.Since(start), 2*time.Second)
		assert.Equal(t, hooks.ClassTimeout, o.Class)
		assert.Contains(t, o.Reason, "timed out after 200ms")
	})
	t.Run("cancelled", func(t *testing.T) {
		t.Parallel()
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(100*time.Millisecond, cancel)
		o := registry().Run(ctx, &stages.HookEntry{Name: "run", Params: hooks.Params{"command": "sleep 5"}}, hookstest.NewIssue(t), nil)
		assert.Equal(t, hooks.KindFail, o.Kind)
		assert.Equal(t, hooks.ClassGeneral, o.Class)
		assert.Contains(t, o.Reason, `command "sleep 5" failed (cancelled, general)`)
	})
	t.Run("cannot start", func(t *testing.T) {
		t.Parallel()
		issue := hookstest.NewIssue(t)
		issue.WorkDir = filepath.Join(issue.Dir, "missing")
		o := hookstest.Call(t, registry(), "run", issue, hooks.Params{"command": "true"}, nil)
		assert.Equal(t, hooks.KindFail, o.Kind)
		assert.Contains(t, o.Reason, `command "true" could not be started in `+issue.WorkDir)
	})
}

// The issue's variables reach every command in the environment; outputs
// and vars reach it under AGENTTREE_VAR_, so none can pose as one of
// agenttree's own variables.
func TestRunIssueVariables(t *testing.T) {
	t.Setenv("AGENTTREE_CONFIG", "")
	issue := hookstest.NewIssue(t)
	issue.WorkDir = issue.Dir
	issue.Branch, issue.PRNumber, issue.Labels = "issue-7", 12, []string{"ui", "auth"}
	issue.Outputs = map[string]string{"coverage": "85", "config": "/tmp/evil.yaml", "other": "x"}
	command := `printf '%s|' "$AGENTTREE_ISSUE_ID" "$AGENTTREE_ISSUE_TITLE" "$AGENTTREE_BRANCH" "$AGENTTREE_PR_NUMBER" "$AGENTTREE_LABELS" ` +
		`{{coverage}} "$AGENTTREE_VAR_COVERAGE" "${AGENTTREE_VAR_OTHER-unset}" {{config}} "$AGENTTREE_CONFIG"`
	o := hookstest.Call(t, registry(), "run", issue, hooks.Params{"command": command}, nil)
	require.Equal(t, hooks.KindPass, o.Kind, o.Reason)
	assert.Equal(t, "7|Add login|issue-7|12|ui, auth|85|85|unset|/tmp/evil.yaml||", o.Outputs["output_tail"])
}

func TestTailBuffer(t *testing.T) {
	b := &tailBuffer{max: 8}
	for _, s := range []string{"abc", "defgh", "ijk", "0123456789XYZ"} {
		n, err := b.Write([]byte(s))
		assert.NoError(t, err)
		assert.Equal(t, len(s), n)
	}
	assert.Equal(t, "56789XYZ", b.String())
}

// registry holds the hooks of this package, as the tests call them.
func registry() *hooks.Registry { return hooks.NewRegistry(Defs()...) }
