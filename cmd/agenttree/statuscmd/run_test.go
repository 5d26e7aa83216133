package statuscmd

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/cmd/agenttree/cmdutil/cmdtest"
	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/internal/gittest"
	"github.com/agenttree/agenttree/internal/testpipeline"
)

func TestMain(m *testing.M) {
	gittest.IsolateProcess()
	os.Exit(m.Run())
}

// newWorkspace is the cli pipeline on a private tmux server, with issue 1
// in the backlog and issue 2 at implement.code.
func newWorkspace(t *testing.T) *cmdtest.Workspace {
	t.Helper()
	w := cmdtest.NewWith(t, testpipeline.Read(t, "cli")+fmt.Sprintf("tmux: {socket: %q}\n", cmdtest.Tmux(t)))
	e, err := w.App.Engine(t.Context())
	require.NoError(t, err)
	ctx := context.Background()
	_, err = e.Create(ctx, engine.NewIssue{Title: "Add login page"})
	require.NoError(t, err)
	_, err = e.Create(ctx, engine.NewIssue{Title: "Fix typo", Flow: "quick", Stage: "implement.code"})
	require.NoError(t, err)
	w.Reset()
	return w
}

func TestNewCmdStatus(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want *StatusOptions
		err  string
	}{
		{name: "every issue", want: &StatusOptions{}},
		{name: "one, as a block", args: []string{"3", "--block", "--json"}, want: &StatusOptions{IssueArg: "3", Block: true, JSON: true}},
		{name: "two", args: []string{"3", "4"}, err: "ID"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := cmdtest.Options(newCmdStatus, tt.args...)
			if tt.err != "" {
				require.ErrorContains(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestStatusRun(t *testing.T) {
	tests := []struct {
		name string
		opts StatusOptions
		// lines are in the output, in order
		lines []string
		err   string
	}{
		{
			name: "every issue, in pipeline order",
			lines: []string{"ID", "STAGE", "WAITING ON", "\n1 ", "backlog", "Add login page\n", "2 ", "implement.code", "no developer agent is running", "Fix typo\n",
				"\nagents run as this user: the rules hold their commands, not the files (advisory; see `agenttree doctor`)\n"},
		},
		{name: "one issue", opts: StatusOptions{IssueArg: "2"}, lines: []string{"issue 2: Fix typo\n", "  stage:   implement.code", "  waiting: no developer agent is running", "  next:    accepted\n"}},
		{name: "one issue's block", opts: StatusOptions{IssueArg: "2", Block: true}, lines: []string{"issue 2", "implement.code", "agenttree start 2"}},
		{name: "a block of no issue", opts: StatusOptions{Block: true}, err: "--block shows one issue: `agenttree status ID --block`"},
		{name: "no such issue", opts: StatusOptions{IssueArg: "9"}, err: "9"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorkspace(t)
			tt.opts.App = w.App
			err := statusRun(t.Context(), &tt.opts)
			if tt.err != "" {
				require.ErrorContains(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			out := w.Out.String()
			for _, l := range tt.lines {
				i := strings.Index(out, l)
				require.GreaterOrEqual(t, i, 0, "%q not in:\n%s", l, w.Out.String())
				out = out[i+len(l):]
			}
		})
	}
}

func TestStatusRunJSON(t *testing.T) {
	w := newWorkspace(t)
	require.NoError(t, statusRun(t.Context(), &StatusOptions{App: w.App, JSON: true}))
	var rows []Row
	require.NoError(t, json.Unmarshal(w.Out.Bytes(), &rows), w.Out.String())
	require.Len(t, rows, 2)
	assert.Equal(t, []int{1, 2}, []int{rows[0].ID, rows[1].ID})
	assert.Equal(t, WaiterPerson, rows[1].WaitingFor)
	assert.Equal(t, "accepted", rows[1].Next)
}

func TestNewCmdWatch(t *testing.T) {
	got, err := cmdtest.Options(newCmdWatch, "3")
	require.NoError(t, err)
	assert.Equal(t, &WatchOptions{IssueArg: "3", Interval: time.Second}, got)
	got, err = cmdtest.Options(newCmdWatch, "3", "--interval", "5s", "--until-done", "--json")
	require.NoError(t, err)
	assert.Equal(t, &WatchOptions{IssueArg: "3", Interval: 5 * time.Second, UntilDone: true, JSON: true}, got)
	_, err = cmdtest.Options(newCmdWatch)
	require.ErrorContains(t, err, "ID")
}

func TestWatchRun(t *testing.T) {
	tests := []struct {
		name string
		opts WatchOptions
		// out is in the output; err the error
		out, err string
	}{
		{name: "the issue as found", opts: WatchOptions{IssueArg: "2", Interval: time.Millisecond},
			out: "  issue 2 (Fix typo) at implement.code: no developer agent is running: start one with `agenttree start 2`\n"},
		{name: "as JSON Lines", opts: WatchOptions{IssueArg: "2", Interval: time.Millisecond, JSON: true}, out: `"kind":"state"`},
		{name: "no interval", opts: WatchOptions{IssueArg: "2"}, err: "--interval must be more than zero, not 0s"},
		{name: "no such issue", opts: WatchOptions{IssueArg: "9", Interval: time.Second}, err: "9"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorkspace(t)
			// Watching ends when its context does: here, after its first look.
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			tt.opts.App = w.App
			err := watchRun(ctx, &tt.opts)
			if tt.err != "" {
				require.ErrorContains(t, err, tt.err)
				assert.Empty(t, w.Out.String())
				return
			}
			require.NoError(t, err)
			assert.Contains(t, w.Out.String(), tt.out)
			assert.Equal(t, 1, strings.Count(w.Out.String(), "\n"), "one line: the state watching found")
		})
	}
}
