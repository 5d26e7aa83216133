package flowcmd

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/cmd/agenttree/cmdutil"
	"github.com/agenttree/agenttree/cmd/agenttree/cmdutil/cmdtest"
	"github.com/agenttree/agenttree/controller/api"
	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/internal/exitcode"
	"github.com/agenttree/agenttree/internal/gittest"
	"github.com/agenttree/agenttree/sessions/tokens"
)

func TestMain(m *testing.M) {
	gittest.IsolateProcess()
	os.Exit(m.Run())
}

// newWorkspace is the cli pipeline with issue 1 at stage.
func newWorkspace(t *testing.T, stage string) *cmdtest.Workspace {
	t.Helper()
	w := cmdtest.New(t, "cli")
	e, err := w.App.Engine(t.Context())
	require.NoError(t, err)
	_, err = e.Create(context.Background(), engine.NewIssue{Title: "Add login page", Stage: stage})
	require.NoError(t, err)
	w.Reset()
	return w
}

func TestNewCmds(t *testing.T) {
	cmdtest.CheckFlags(t, []cmdtest.Flags{
		{Name: "next", Run: cmdtest.Flagged(newCmdNext), Want: &NextOptions{}},
		{Name: "next, every flag", Run: cmdtest.Flagged(newCmdNext, "-i", "3", "--dry-run", "--json"), Want: &NextOptions{IssueArg: "3", DryRun: true, JSON: true}},
		{Name: "next takes no argument", Run: cmdtest.Flagged(newCmdNext, "3"), Err: "unknown command"},
		{Name: "approve", Run: cmdtest.Flagged(newCmdApprove, "3", "--dry-run"), Want: &ApproveOptions{IssueArg: "3", DryRun: true}},
		{Name: "approve nothing", Run: cmdtest.Flagged(newCmdApprove), Err: "ID"},
		{Name: "resume", Run: cmdtest.Flagged(newCmdResume, "3", "--reason", "CI fixed"), Want: &ByHandOptions{IssueArg: "3", Reason: "CI fixed"}},
		{Name: "skip", Run: cmdtest.Flagged(newCmdSkip, "3", "--reason", "docs", "--json"), Want: &ByHandOptions{IssueArg: "3", Reason: "docs", JSON: true}},
		{Name: "abort", Run: cmdtest.Flagged(newCmdAbort, "3", "--reason", "dup"), Want: &ByHandOptions{IssueArg: "3", Reason: "dup"}},
		{Name: "reject", Run: cmdtest.Flagged(newCmdReject, "3", "--message", "labels", "--to", "plan"), Want: &RejectOptions{IssueArg: "3", Message: "labels", To: "plan"}},
		{Name: "move", Run: cmdtest.Flagged(newCmdMove, "3", "security", "--reason", "r"), Want: &MoveOptions{IssueArg: "3", Stage: "security", Reason: "r"}},
		{Name: "move without a stage", Run: cmdtest.Flagged(newCmdMove, "3"), Err: "STAGE"},
	})
}

// Each run moves, or refuses to move, a real issue in a real repository,
// and says so as the CLI prints it; stage is where the issue is after.
func TestRuns(t *testing.T) {
	tests := []struct {
		name string
		// at is where issue 1 starts; env is the environment (a person's
		// when empty).
		at  string
		env map[string]string
		run func(a *cmdutil.App) error
		// out starts the output (the rest names temporary directories);
		// err is the error, code its exit code (0: none).
		out, err, stage string
		code            exitcode.Code
	}{
		{name: "next blocked by a gate", at: "implement.code", run: func(a *cmdutil.App) error { return nextRun(t.Context(), &NextOptions{App: a, IssueArg: "1"}) },
			out: "issue 1 is blocked at implement.code; fix these, then run `agenttree next` again:\n  - notes.md: not found", code: exitcode.Blocked, stage: "implement.code"},
		{name: "next, dry run", at: "backlog", run: func(a *cmdutil.App) error {
			return nextRun(t.Context(), &NextOptions{App: a, IssueArg: "1", DryRun: true})
		},
			out: "issue 1 would move backlog → plan.draft (advance)\n", stage: "backlog"},
		{name: "next", at: "backlog", run: func(a *cmdutil.App) error { return nextRun(t.Context(), &NextOptions{App: a, IssueArg: "1"}) },
			out: "issue 1 moved backlog → plan.draft (advance)\n\nWork on plan.draft on branch issue-001-add-login-page", stage: "plan.draft"},
		{name: "an agent's next, its issue from the environment", at: "implement.feedback",
			env: map[string]string{"AGENTTREE_ROLE": "developer", "AGENTTREE_ISSUE": "1"},
			run: func(a *cmdutil.App) error { return nextRun(t.Context(), &NextOptions{App: a}) },
			out: "issue 1 moved implement.feedback → security (advance)\n", stage: "security"},
		{name: "an agent's next at another role's stage", at: "security",
			env: map[string]string{"AGENTTREE_ROLE": "developer", "AGENTTREE_ISSUE": "1"},
			run: func(a *cmdutil.App) error { return nextRun(t.Context(), &NextOptions{App: a}) },
			out: "issue 1 is waiting at security:", code: exitcode.Waiting, stage: "security"},
		{name: "approve", at: "implementation_review", run: func(a *cmdutil.App) error { return approveRun(t.Context(), &ApproveOptions{App: a, IssueArg: "1"}) },
			out: "issue 1 moved implementation_review → accepted (approve)\n\naccepted is the end of the flow.\n", stage: "accepted"},
		{name: "approve at no review", at: "implement.code", run: func(a *cmdutil.App) error { return approveRun(t.Context(), &ApproveOptions{App: a, IssueArg: "1"}) },
			err: "not at a human review stage; use `agenttree next -i 1`", code: exitcode.Usage, stage: "implement.code"},
		{name: "resume, nothing to resume", at: "implement.code", run: func(a *cmdutil.App) error {
			return resumeRun(t.Context(), &ByHandOptions{App: a, IssueArg: "1", Reason: "x"})
		},
			err: "nothing to resume", code: exitcode.Usage, stage: "implement.code"},
		{name: "skip", at: "implement.code", run: func(a *cmdutil.App) error {
			return skipRun(t.Context(), &ByHandOptions{App: a, IssueArg: "1", Reason: "docs only"})
		},
			out: "issue 1 moved implement.code → implement.feedback (skip)\n  docs only\n", stage: "implement.feedback"},
		{name: "skip, by an agent", at: "implement.code", env: map[string]string{"AGENTTREE_ROLE": "developer"},
			run: func(a *cmdutil.App) error {
				return skipRun(t.Context(), &ByHandOptions{App: a, IssueArg: "1", Reason: "docs only"})
			},
			out: "issue 1 is waiting at implement.code: only a person can skip a stage", code: exitcode.Waiting, stage: "implement.code"},
		{name: "abort", at: "implement.code", run: func(a *cmdutil.App) error {
			return abortRun(t.Context(), &ByHandOptions{App: a, IssueArg: "1", Reason: "duplicate"})
		},
			out: "issue 1 moved implement.code → not_doing (abort)\n  duplicate\n\nnot_doing is the end of the flow.\n", stage: "not_doing"},
		{name: "reject", at: "implementation_review", run: func(a *cmdutil.App) error {
			return rejectRun(t.Context(), &RejectOptions{App: a, IssueArg: "1", Message: "labels"})
		},
			out: "issue 1 moved implementation_review → security (reject)\n  labels\n", stage: "security"},
		{name: "reject, to a stage", at: "implementation_review",
			run: func(a *cmdutil.App) error {
				return rejectRun(t.Context(), &RejectOptions{App: a, IssueArg: "1", Message: "start over", To: "plan.draft"})
			},
			out: "issue 1 moved implementation_review → plan.draft (reject)\n", stage: "plan.draft"},
		{name: "move", at: "implement.code", run: func(a *cmdutil.App) error {
			return moveRun(t.Context(), &MoveOptions{App: a, IssueArg: "1", Stage: "security", Reason: "r"})
		},
			out: "issue 1 moved implement.code → security (move)\n  r\n", stage: "security"},
		{name: "move nowhere", at: "implement.code", run: func(a *cmdutil.App) error {
			return moveRun(t.Context(), &MoveOptions{App: a, IssueArg: "1", Stage: "nope", Reason: "r"})
		},
			err: `flow "default" has no stage "nope"`, code: exitcode.Usage, stage: "implement.code"},
		{name: "no such issue", at: "implement.code", run: func(a *cmdutil.App) error {
			return skipRun(t.Context(), &ByHandOptions{App: a, IssueArg: "9", Reason: "r"})
		},
			err: "9", stage: "implement.code"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorkspace(t, tt.at)
			for k, v := range tt.env {
				w.Env[k] = v
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
			assert.True(t, len(w.Out.String()) >= len(tt.out) && w.Out.String()[:len(tt.out)] == tt.out, "output:\n%s\nwant it to start with:\n%s", w.Out, tt.out)
			e, err := w.App.Engine(t.Context())
			require.NoError(t, err)
			iss, err := e.Store.Get(1)
			require.NoError(t, err)
			assert.Equal(t, tt.stage, iss.Stage)
		})
	}
}

// --json prints the engine's result; a resume that goes on where the issue
// is says so rather than "moved X → X".
func TestRunsJSON(t *testing.T) {
	w := newWorkspace(t, "backlog")
	require.NoError(t, nextRun(t.Context(), &NextOptions{App: w.App, IssueArg: "1", JSON: true}))
	var res engine.Result
	require.NoError(t, json.Unmarshal(w.Out.Bytes(), &res), w.Out.String())
	assert.Equal(t, engine.StatusAdvanced, res.Status)
	assert.Equal(t, "plan.draft", res.To)

	w.Reset()
	require.NoError(t, skipRun(t.Context(), &ByHandOptions{App: w.App, IssueArg: "1", Reason: "r", JSON: true}))
	require.NoError(t, json.Unmarshal(w.Out.Bytes(), &res), w.Out.String())
	assert.Equal(t, "plan.review", res.To)
}

// An agent whose commands go to the controller (AGENTTREE_SOCKET) is
// answered with the engine's result, printed as a person's next prints it.
func TestNextOverTheControllersSocket(t *testing.T) {
	here := newWorkspace(t, "backlog")
	require.NoError(t, nextRun(t.Context(), &NextOptions{App: here.App, IssueArg: "1", DryRun: true}))

	w := newWorkspace(t, "backlog")
	e, err := w.App.Engine(t.Context())
	require.NoError(t, err)
	dir, err := os.MkdirTemp("", "flowcmd") // a socket's path must stay short
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	socket := filepath.Join(dir, "s.sock")
	ln, err := api.Listen(socket)
	require.NoError(t, err)
	agents := api.Agents{Engine: func() (*engine.Engine, error) { return e, nil }}
	asked := 0
	srv := &api.Server{Sessions: tokens.Open(e.Store.Root()), Owner: os.Getuid(), ExitCode: cmdutil.ExitCode, Handlers: api.Handlers{
		Next: func(ctx context.Context, c api.Caller, req api.NextRequest) (*api.NextResult, error) {
			asked++
			return agents.Next(ctx, c, req)
		},
	}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Serve(ctx, ln) }()
	t.Cleanup(func() { cancel(); <-done })

	w.Reset() // the App asks the controller from its first command on
	w.Env["AGENTTREE_SOCKET"] = socket
	require.NoError(t, nextRun(t.Context(), &NextOptions{App: w.App, IssueArg: "1", DryRun: true}))
	assert.Equal(t, here.Out.String(), w.Out.String())
	assert.Equal(t, "issue 1 would move backlog → plan.draft (advance)\n", w.Out.String())
	assert.Equal(t, 1, asked, "the controller was asked")

	w.Reset()
	w.Env["AGENTTREE_SOCKET"] = socket
	err = nextRun(t.Context(), &NextOptions{App: w.App, IssueArg: "x"})
	require.ErrorContains(t, err, "x")
	assert.Equal(t, int(exitcode.Usage), cmdutil.ExitCode(err))
}
