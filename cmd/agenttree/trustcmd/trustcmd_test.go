package trustcmd

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/cmd/agenttree/cmdutil"
	"github.com/agenttree/agenttree/cmd/agenttree/cmdutil/cmdtest"
	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/internal/exitcode"
	"github.com/agenttree/agenttree/internal/gittest"
)

func TestMain(m *testing.M) {
	gittest.IsolateProcess()
	os.Exit(m.Run())
}

// newWorkspace is the cli pipeline with issue 1 at implement.code; edit
// changes its issue.yaml behind agenttree's back.
func newWorkspace(t *testing.T, edit bool) *cmdtest.Workspace {
	t.Helper()
	w := cmdtest.New(t, "cli")
	e, err := w.App.Engine(t.Context())
	require.NoError(t, err)
	_, err = e.Create(context.Background(), engine.NewIssue{Title: "Add login page", Stage: "implement.code"})
	require.NoError(t, err)
	if edit {
		path := filepath.Join(e.Store.HostDir(1), "issue.yaml")
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(path, []byte(strings.Replace(string(data), "stage: implement.code", "stage: implementation_review", 1)), 0o644))
	}
	w.Reset()
	return w
}

func TestNewCmds(t *testing.T) {
	cmdtest.CheckFlags(t, []cmdtest.Flags{
		{Name: "verify", Run: cmdtest.Flagged(newCmdVerify), Want: &VerifyOptions{}},
		{Name: "verify ID", Run: cmdtest.Flagged(newCmdVerify, "3", "--json"), Want: &VerifyOptions{IssueArg: "3", JSON: true}},
		{Name: "verify two", Run: cmdtest.Flagged(newCmdVerify, "3", "4"), Err: "ID"},
		{Name: "repair", Run: cmdtest.Flagged(newCmdRepair, "3", "--adopt", "--json"), Want: &RepairOptions{IssueArg: "3", Adopt: true, JSON: true}},
		{Name: "repair nothing", Run: cmdtest.Flagged(newCmdRepair), Err: "ID"},
		{Name: "doctor", Run: cmdtest.Flagged(newCmdDoctor, "--fix", "--json"), Want: &DoctorOptions{Fix: true, JSON: true}},
	})
}

func TestVerifyRun(t *testing.T) {
	tests := []struct {
		name   string
		edited bool
		opts   VerifyOptions
		// lines are in the output, in order; code is the exit code
		lines []string
		code  exitcode.Code
	}{
		{name: "every issue, consistent", lines: []string{"issue 1: ok (1 events, version 1)\n"}},
		{name: "one issue, consistent", opts: VerifyOptions{IssueArg: "1"}, lines: []string{"issue 1: ok (1 events, version 1)\n"}},
		{name: "one issue, changed", edited: true, opts: VerifyOptions{IssueArg: "1"}, code: exitcode.Blocked,
			lines: []string{"issue 1: CHANGED OUTSIDE AGENTTREE\n", "stage: implement.code → implementation_review", "a person restores its last consistent state with `agenttree repair 1`\n"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorkspace(t, tt.edited)
			tt.opts.App = w.App
			err := verifyRun(t.Context(), &tt.opts)
			if tt.code != 0 {
				assert.Equal(t, int(tt.code), cmdutil.ExitCode(err))
			} else {
				require.NoError(t, err)
			}
			out := w.Out.String()
			for _, l := range tt.lines {
				i := strings.Index(out, l)
				require.GreaterOrEqual(t, i, 0, "%q not in:\n%s", l, w.Out.String())
				out = out[i+len(l):]
			}
		})
	}
}

func TestVerifyRunJSON(t *testing.T) {
	w := newWorkspace(t, true)
	err := verifyRun(t.Context(), &VerifyOptions{App: w.App, IssueArg: "1", JSON: true})
	assert.Equal(t, int(exitcode.Blocked), cmdutil.ExitCode(err))
	var out struct {
		OK     bool `json:"ok"`
		Issues []struct {
			ID int  `json:"id"`
			OK bool `json:"ok"`
		} `json:"issues"`
	}
	require.NoError(t, json.Unmarshal(w.Out.Bytes(), &out), w.Out.String())
	assert.False(t, out.OK)
	require.Len(t, out.Issues, 1)
	assert.False(t, out.Issues[0].OK)
}

func TestRepairRun(t *testing.T) {
	tests := []struct {
		name   string
		edited bool
		env    map[string]string
		opts   RepairOptions
		// out starts the output; stage is where the issue is after
		out, stage, err string
		code            exitcode.Code
	}{
		{name: "nothing to repair", opts: RepairOptions{IssueArg: "1"}, out: "issue 1: nothing to repair, it is consistent (version 1)\n", stage: "implement.code"},
		{name: "a hand edit undone", edited: true, opts: RepairOptions{IssueArg: "1"}, out: "issue 1: restored the state of version 1, as version 2\n", stage: "implement.code"},
		{name: "by an agent", edited: true, env: map[string]string{"AGENTTREE_ROLE": "developer"}, opts: RepairOptions{IssueArg: "1"},
			err: "repair is for people", code: exitcode.Waiting},
		{name: "no such issue", opts: RepairOptions{IssueArg: "9"}, err: "9"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorkspace(t, tt.edited)
			for k, v := range tt.env {
				w.Env[k] = v
			}
			tt.opts.App = w.App
			err := repairRun(t.Context(), &tt.opts)
			if tt.err != "" {
				require.ErrorContains(t, err, tt.err)
				if tt.code != 0 {
					assert.Equal(t, int(tt.code), cmdutil.ExitCode(err))
				}
				assert.Empty(t, w.Out.String())
				return
			}
			require.NoError(t, err)
			assert.True(t, strings.HasPrefix(w.Out.String(), tt.out), w.Out.String())
			e, err := w.App.Engine(t.Context())
			require.NoError(t, err)
			iss, err := e.Store.Get(1)
			require.NoError(t, err, "the issue reads again")
			assert.Equal(t, tt.stage, iss.Stage)
		})
	}
}

func TestDoctorRun(t *testing.T) {
	w := newWorkspace(t, false)
	require.NoError(t, doctorRun(t.Context(), &DoctorOptions{App: w.App}))
	assert.Contains(t, w.Out.String(), "deployment:      same user")
	assert.Contains(t, w.Out.String(), "— a person")

	w.Reset()
	require.NoError(t, doctorRun(t.Context(), &DoctorOptions{App: w.App, JSON: true}))
	var rep DoctorReport
	require.NoError(t, json.Unmarshal(w.Out.Bytes(), &rep), w.Out.String())
	assert.NotEmpty(t, rep.Findings)

	w.Reset()
	w.Env["AGENTTREE_ROLE"] = "developer"
	err := doctorRun(t.Context(), &DoctorOptions{App: w.App, Fix: true})
	require.ErrorContains(t, err, "doctor --fix is for people")
	assert.Equal(t, int(exitcode.Waiting), cmdutil.ExitCode(err))
}
