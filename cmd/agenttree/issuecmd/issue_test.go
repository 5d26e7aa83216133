package issuecmd

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/cmd/agenttree/cmdutil"
	"github.com/agenttree/agenttree/cmd/agenttree/cmdutil/cmdtest"
	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/internal/exitcode"
	"github.com/agenttree/agenttree/internal/gittest"
)

func TestMain(m *testing.M) {
	gittest.IsolateProcess()
	os.Exit(m.Run())
}

func TestNewCmdCreate(t *testing.T) {
	cmdtest.CheckFlags(t, []cmdtest.Flags{
		{Name: "title", Run: cmdtest.Flagged(newCmdCreate, "Add login page"), Want: &CreateOptions{Req: engine.NewIssue{Title: "Add login page"}}},
		{
			Name: "every flag",
			Run: cmdtest.Flagged(newCmdCreate, "Fix typo", "--flow", "quick", "--stage", "implement.code", "--label", "a,b", "--label", "c",
				"--set", "x=1", "--set", "y=a,b", "--json"),
			Want: &CreateOptions{Req: engine.NewIssue{Title: "Fix typo", Flow: "quick", Stage: "implement.code", Labels: []string{"a", "b", "c"}},
				Sets: []string{"x=1", "y=a,b"}, JSON: true},
		},
		{Name: "no title", Run: cmdtest.Flagged(newCmdCreate), Err: "TITLE"},
		{Name: "two titles", Run: cmdtest.Flagged(newCmdCreate, "a", "b"), Err: "TITLE"},
	})
}

func TestCreateRun(t *testing.T) {
	tests := []struct {
		name string
		opts CreateOptions
		// out is the output, err the error, stage and vars what was stored.
		out, err string
		stage    string
		vars     map[string]any
	}{
		{
			name: "at the default flow's start",
			opts: CreateOptions{Req: engine.NewIssue{Title: "Add login page"}},
			out:  "created issue 1 \"Add login page\" at backlog (flow default, branch issue-001-add-login-page)\n", stage: "backlog",
		},
		{
			name: "at a stage, with variables parsed as YAML",
			opts: CreateOptions{Req: engine.NewIssue{Title: "Fix typo", Flow: "quick", Stage: "implement.code"}, Sets: []string{"n=3", "ok=true", "s=a: b: c"}},
			out:  "created issue 1 \"Fix typo\" at implement.code (flow quick, branch issue-001-fix-typo)\n", stage: "implement.code",
			vars: map[string]any{"n": 3, "ok": true, "s": "a: b: c"},
		},
		{name: "a --set without =", opts: CreateOptions{Req: engine.NewIssue{Title: "x"}, Sets: []string{"flag"}}, err: `--set "flag": write NAME=VALUE`},
		{name: "an unknown flow", opts: CreateOptions{Req: engine.NewIssue{Title: "x", Flow: "nope"}}, err: "nope"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := cmdtest.New(t, "cli")
			tt.opts.App = w.App
			err := createRun(t.Context(), &tt.opts)
			if tt.err != "" {
				require.ErrorContains(t, err, tt.err)
				assert.Empty(t, w.Out.String())
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.out, w.Out.String())
			e, err := w.App.Engine(t.Context())
			require.NoError(t, err)
			iss, err := e.Store.Get(1)
			require.NoError(t, err)
			assert.Equal(t, tt.stage, iss.Stage)
			assert.Equal(t, "human", iss.History[0].Actor)
			if tt.vars != nil {
				assert.Equal(t, tt.vars, iss.Vars)
			}
		})
	}
}

func TestCreateRunJSON(t *testing.T) {
	w := cmdtest.New(t, "cli")
	require.NoError(t, createRun(t.Context(), &CreateOptions{App: w.App, Req: engine.NewIssue{Title: "Add login page"}, JSON: true}))
	var iss issues.Issue
	require.NoError(t, json.Unmarshal(w.Out.Bytes(), &iss), w.Out.String())
	assert.Equal(t, 1, iss.ID)
	assert.Equal(t, "backlog", iss.Stage)
}

// create makes issues titled titles in w, through the run.
func create(t *testing.T, w *cmdtest.Workspace, flow string, titles ...string) {
	t.Helper()
	for _, title := range titles {
		w.Reset()
		require.NoError(t, createRun(t.Context(), &CreateOptions{App: w.App, Req: engine.NewIssue{Title: title, Flow: flow}}))
	}
	w.Reset()
}

func TestListRun(t *testing.T) {
	tests := []struct {
		name  string
		opts  ListOptions
		out   string
		err   string
		code  exitcode.Code
		empty bool
	}{
		{name: "every issue", out: "ID  STAGE           FLOW     TITLE\n1   backlog         default  Add login page\n2   implement.code  quick    Fix typo\n"},
		{name: "a stage and its substages", opts: ListOptions{Stage: "implement"}, out: "ID  STAGE           FLOW   TITLE\n2   implement.code  quick  Fix typo\n"},
		{name: "a stage nobody is at", opts: ListOptions{Stage: "accepted"}, out: "no issues; create one with `agenttree issue create TITLE`\n"},
		{name: "a stage that is none", opts: ListOptions{Stage: "implemnt"}, err: `no stage "implemnt"`, code: exitcode.Usage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := cmdtest.New(t, "cli")
			create(t, w, "", "Add login page")
			create(t, w, "quick", "Fix typo")
			e, err := w.App.Engine(t.Context())
			require.NoError(t, err)
			_, err = e.Next(t.Context(), 2, engine.Actor{Kind: engine.ActorHuman}, false)
			require.NoError(t, err)
			w.Reset()
			tt.opts.App = w.App
			err = listRun(t.Context(), &tt.opts)
			if tt.err != "" {
				require.ErrorContains(t, err, tt.err)
				require.ErrorContains(t, err, "did you mean implement?")
				assert.Equal(t, int(tt.code), cmdutil.ExitCode(err))
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.out, w.Out.String())
		})
	}
}

func TestListRunJSONIsAnArrayEvenEmpty(t *testing.T) {
	w := cmdtest.New(t, "cli")
	require.NoError(t, listRun(t.Context(), &ListOptions{App: w.App, JSON: true}))
	assert.Equal(t, "[]\n", w.Out.String())
}

func TestShowRun(t *testing.T) {
	tests := []struct {
		name string
		id   string
		// lines are in the output, in order; err is the error.
		lines []string
		err   string
	}{
		{name: "an issue", id: "1", lines: []string{"issue 1: Add login page\n", "  stage:   backlog (flow default, version 1)\n",
			"  branch:  issue-001-add-login-page\n", "  labels:  ui\n", "  vars:    n=3\n", "  history:\n", "create    · → backlog by human\n"}},
		{name: "no such issue", id: "7", err: "7"},
		{name: "not an id", id: "seven", err: "seven"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := cmdtest.New(t, "cli")
			require.NoError(t, createRun(t.Context(), &CreateOptions{App: w.App, Req: engine.NewIssue{Title: "Add login page", Labels: []string{"ui"}}, Sets: []string{"n=3"}}))
			w.Reset()
			err := showRun(t.Context(), &ShowOptions{App: w.App, ID: tt.id})
			if tt.err != "" {
				require.ErrorContains(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			out := w.Out.String()
			for _, l := range tt.lines {
				i := indexOf(out, l)
				require.GreaterOrEqual(t, i, 0, "%q not in:\n%s", l, out)
				out = out[i+len(l):]
			}
		})
	}
}

func indexOf(s, sub string) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return i
		}
	}
	return -1
}
