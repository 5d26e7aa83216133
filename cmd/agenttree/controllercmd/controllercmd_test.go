package controllercmd

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/cmd/agenttree/cmdutil"
	"github.com/agenttree/agenttree/cmd/agenttree/cmdutil/cmdtest"
	"github.com/agenttree/agenttree/cmd/agenttree/statuscmd"
	"github.com/agenttree/agenttree/controller"
	"github.com/agenttree/agenttree/controller/api"
	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/engine/outbox"
	"github.com/agenttree/agenttree/engine/report"
	"github.com/agenttree/agenttree/hooks"
	"github.com/agenttree/agenttree/internal/exitcode"
	"github.com/agenttree/agenttree/internal/gittest"
	"github.com/agenttree/agenttree/internal/statedir"
	"github.com/agenttree/agenttree/internal/testpipeline"
)

func TestMain(m *testing.M) {
	gittest.IsolateProcess()
	os.Exit(m.Run())
}

// newWorkspace is the cli pipeline on a private tmux server, with issue 1
// at implement.code; message puts a message for its agent in its outbox.
func newWorkspace(t *testing.T, message bool) *cmdtest.Workspace {
	t.Helper()
	w := cmdtest.NewWith(t, testpipeline.Read(t, "cli")+fmt.Sprintf("tmux: {socket: %q}\n", cmdtest.Tmux(t)))
	e, err := w.App.Engine(t.Context())
	require.NoError(t, err)
	ctx := context.Background()
	_, err = e.Create(ctx, engine.NewIssue{Title: "Add login page", Stage: "implement.code"})
	require.NoError(t, err)
	if message {
		_, err = e.Outbox(1).Put(ctx, outbox.Message{Kind: "rebase", Text: "main moved on"})
		require.NoError(t, err)
	}
	w.Reset()
	return w
}

func TestNewCmds(t *testing.T) {
	cmdtest.CheckFlags(t, []cmdtest.Flags{
		{Name: "controller", Run: cmdtest.Flagged(newCmdController), Want: &ControllerOptions{LogFormat: "text"}},
		{Name: "controller, every flag", Run: cmdtest.Flagged(newCmdController, "--once", "--issue", "3", "--interval", "30s", "--log-format", "json", "--json"),
			Want: &ControllerOptions{Once: true, IssueArg: "3", Interval: 30 * time.Second, LogFormat: "json", JSON: true}},
		{Name: "controller takes no argument", Run: cmdtest.Flagged(newCmdController, "3"), Err: "unknown command"},
		{Name: "pr wait ID", Run: cmdtest.Flagged(newCmdPRWait, "3", "--interval", "5s", "--json"), Want: &PRWaitOptions{IssueArg: "3", Interval: 5 * time.Second, JSON: true}},
		{Name: "pr wait --pr", Run: cmdtest.Flagged(newCmdPRWait, "--pr", "45"), Want: &PRWaitOptions{PR: 45}},
		{Name: "pr wait, an issue and a PR", Run: cmdtest.Flagged(newCmdPRWait, "3", "--pr", "45"), Err: "name the issue or its PR, not both: `agenttree pr wait --pr 45` or `agenttree pr wait 3`"},
		{Name: "pr wait nothing", Run: cmdtest.Flagged(newCmdPRWait), Err: "ID"},
		{Name: "ci runner, its arguments unparsed", Run: cmdtest.Flagged(newCmdCIRunner, "--attempt", "a1", "--", "make", "test"),
			Want: &CIRunnerOptions{Args: []string{"--attempt", "a1", "--", "make", "test"}}},
	})
}

func TestRuns(t *testing.T) {
	tests := []struct {
		name string
		// message puts a message in issue 1's outbox (its agent has no
		// session: it stays there); env is the environment, a person's
		// when empty; held holds the controller's lock meanwhile.
		message, held bool
		env           map[string]string
		run           func(a *cmdutil.App) error
		// out is the output; err the error, code its exit code (0: none).
		out, err string
		code     exitcode.Code
	}{
		{name: "one pass, nothing due", run: func(a *cmdutil.App) error { return controllerRun(t.Context(), &ControllerOptions{App: a, Once: true}) },
			out: "nothing for the controller to do\n"},
		{name: "one pass, as JSON", run: func(a *cmdutil.App) error {
			return controllerRun(t.Context(), &ControllerOptions{App: a, Once: true, JSON: true})
		},
			out: "{\n  \"due\": 0,\n  \"failed\": 0,\n  \"results\": []\n}\n"},
		{name: "one pass over an issue with a message", message: true,
			run: func(a *cmdutil.App) error {
				return controllerRun(t.Context(), &ControllerOptions{App: a, Once: true, IssueArg: "1"})
			},
			out: "1 issue(s) looked at (messages, escalations); nothing moved\n"},
		{name: "no such issue", run: func(a *cmdutil.App) error {
			return controllerRun(t.Context(), &ControllerOptions{App: a, Once: true, IssueArg: "9"})
		},
			err: "9"},
		{name: "not an issue id", run: func(a *cmdutil.App) error {
			return controllerRun(t.Context(), &ControllerOptions{App: a, Once: true, IssueArg: "x"})
		},
			err: "x", code: exitcode.Usage},
		{name: "run by an agent", env: map[string]string{"AGENTTREE_ROLE": "developer"},
			run: func(a *cmdutil.App) error { return controllerRun(t.Context(), &ControllerOptions{App: a, Once: true}) },
			err: "the controller runs on the host, for people", code: exitcode.Waiting},
		{name: "another controller runs", held: true, run: func(a *cmdutil.App) error { return controllerRun(t.Context(), &ControllerOptions{App: a, Once: true}) },
			err: controller.ErrRunning.Error(), code: exitcode.Usage},
		{name: "pr wait, no PR yet", run: func(a *cmdutil.App) error { return prWaitRun(t.Context(), &PRWaitOptions{App: a, IssueArg: "1"}) },
			err: "issue 1: no pull request yet"},
		{name: "pr wait, a PR no issue has", run: func(a *cmdutil.App) error { return prWaitRun(t.Context(), &PRWaitOptions{App: a, PR: 45}) },
			err: "no issue here has PR #45"},
		{name: "pr wait, a PR's URL no issue has", run: func(a *cmdutil.App) error {
			return prWaitRun(t.Context(), &PRWaitOptions{App: a, IssueArg: "https://github.com/octo/app/pull/45"})
		}, err: "no issue here has https://github.com/octo/app/pull/45"},
		{name: "the CI runner without a command", run: func(a *cmdutil.App) error { return ciRunnerRun(t.Context(), &CIRunnerOptions{App: a}) },
			code: exitcode.Usage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorkspace(t, tt.message)
			for k, v := range tt.env {
				w.Env[k] = v
			}
			if tt.held {
				unlock, err := controller.Lock(cmdutil.StateDirOf(w.Config()))
				require.NoError(t, err)
				defer unlock()
			}
			err := tt.run(w.App)
			switch {
			case tt.err != "":
				require.ErrorContains(t, err, tt.err)
			case tt.code != 0:
				require.Error(t, err)
			default:
				require.NoError(t, err)
			}
			if tt.code != 0 {
				assert.Equal(t, int(tt.code), cmdutil.ExitCode(err))
			}
			assert.Equal(t, tt.out, w.Out.String())
		})
	}
}

// The controller answers agents on its socket until it is stopped: issue
// show and inbox with what a person's CLI prints, status with the rows or
// the issue its CLI prints.
func TestControllerAnswersAgentsUntilStopped(t *testing.T) {
	w := newWorkspace(t, true)
	e, err := w.App.Engine(t.Context())
	require.NoError(t, err)
	iss, err := e.Store.Get(1)
	require.NoError(t, err)
	var shown bytes.Buffer
	report.Printer{Out: &shown}.Issue(report.Show(e, iss))
	w.Reset()

	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	ran := make(chan error, 1)
	go func() {
		ran <- controllerRun(ctx, &ControllerOptions{App: w.App, Interval: time.Hour, LogFormat: "json"})
	}()
	socket := statedir.Layout{Root: e.Store.Root()}.Socket()
	require.Eventually(t, func() bool { _, err := os.Stat(socket); return err == nil }, 30*time.Second, 20*time.Millisecond, "the controller listens")

	client := api.NewClient(socket, "")
	out, err := client.Do(context.Background(), api.RouteShow, api.ShowRequest{Issue: 1})
	require.NoError(t, err)
	assert.Equal(t, shown.String(), out.Text)
	var status statuscmd.Answer
	require.NoError(t, client.Result(context.Background(), api.RouteStatus, api.StatusRequest{Issue: 1}, &status))
	require.NotNil(t, status.Shown)
	assert.Equal(t, shown.String(), func() string {
		var b bytes.Buffer
		report.Printer{Out: &b}.Issue(*status.Shown)
		return b.String()
	}())
	var all statuscmd.Answer
	require.NoError(t, client.Result(context.Background(), api.RouteStatus, api.StatusRequest{}, &all))
	assert.Len(t, all.Rows, 1)
	_, err = client.Do(context.Background(), api.RouteInbox, api.InboxRequest{})
	var refused *api.Error
	require.ErrorAs(t, err, &refused, "a person's inbox names no issue")
	assert.Contains(t, refused.Message, "an inbox is an issue's")

	stop()
	select {
	case err := <-ran:
		require.NoError(t, err)
	case <-time.After(60 * time.Second):
		t.Fatal("the controller did not stop")
	}
	assert.NoFileExists(t, socket, "a controller that stops removes its socket")
	var started struct {
		Msg string `json:"msg"`
	}
	require.NoError(t, json.NewDecoder(bytes.NewReader(w.ErrOut.Bytes())).Decode(&started), w.ErrOut.String())
	assert.Equal(t, "controller started", started.Msg, "--log-format json")
}

// printWait says how waiting for CI ended, and what to do next.
func TestPrintWait(t *testing.T) {
	tests := []struct {
		name string
		out  controller.WaitOutcome
		want string
	}{
		{"passed", controller.WaitOutcome{Passed: true, Reason: "3 checks passed"}, "CI passed: 3 checks passed\n"},
		{"timed out", controller.WaitOutcome{TimedOut: true, Reason: "no verdict in 30m"}, "CI did not finish in time: no verdict in 30m\n"},
		{"a conflict", controller.WaitOutcome{Class: hooks.ClassConflict, Reason: "main moved"},
			"the PR conflicts with its base, so CI does not count yet: main moved\n"},
		{"failed, with feedback", controller.WaitOutcome{Reason: "test failed", Feedback: "/x/ci_feedback.md"},
			"CI did not pass: test failed\nwhat failed, with the log: /x/ci_feedback.md\nfix it, commit, `git push`, then run `agenttree pr wait 3` again\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			cmds{&cmdutil.App{Out: &b}}.printWait(&tt.out, 3)
			assert.Equal(t, tt.want, b.String())
		})
	}
}
