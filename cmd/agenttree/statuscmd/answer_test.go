package statuscmd

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/cmd/agenttree/cmdutil"
	"github.com/agenttree/agenttree/controller/api"
	"github.com/agenttree/agenttree/internal/exitcode"
	"github.com/agenttree/agenttree/sessions/tokens"
)

// An agent's status goes to the controller, which answers with the rows,
// the issue or the block (AnswerOf); the agent's CLI prints them as a
// person's status prints what it reads itself, byte for byte, less what
// status adds about the host it runs on.
func TestStatusOverTheControllersSocket(t *testing.T) {
	w := newWorkspace(t)
	e, err := w.App.Engine(t.Context())
	require.NoError(t, err)
	dir, err := os.MkdirTemp("", "statuscmd") // a socket's path must stay short
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	socket := filepath.Join(dir, "s.sock")
	ln, err := api.Listen(socket)
	require.NoError(t, err)
	asked := 0
	srv := &api.Server{Sessions: tokens.Open(e.Store.Root()), Owner: os.Getuid(), ExitCode: cmdutil.ExitCode, Handlers: api.Handlers{
		Status: func(ctx context.Context, _ api.Caller, req api.StatusRequest) (any, error) {
			asked++
			return AnswerOf(ctx, e, req)
		},
	}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Serve(ctx, ln) }()
	t.Cleanup(func() { cancel(); <-done })

	run := func(remote bool, opts StatusOptions) (string, error) {
		w.Reset()
		delete(w.Env, "AGENTTREE_SOCKET")
		if remote {
			w.Env["AGENTTREE_SOCKET"] = socket
		}
		opts.App = w.App
		err := statusRun(t.Context(), &opts)
		return w.Out.String(), err
	}
	tests := []struct {
		name string
		opts StatusOptions
		// hostNote is what a person's status adds after the table.
		hostNote bool
	}{
		{name: "every issue", hostNote: true},
		{name: "every issue, as JSON", opts: StatusOptions{JSON: true}},
		{name: "one issue", opts: StatusOptions{IssueArg: "2"}},
		{name: "one issue, as JSON", opts: StatusOptions{IssueArg: "2", JSON: true}},
		{name: "one issue's block", opts: StatusOptions{IssueArg: "2", Block: true}},
		{name: "one issue's block, as JSON", opts: StatusOptions{IssueArg: "2", Block: true, JSON: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := asked
			// The ages printed are whole seconds: the two runs may fall on
			// either side of one.
			var here, there string
			var errHere, errThere error
			for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
				here, errHere = run(false, tt.opts)
				there, errThere = run(true, tt.opts)
				if tt.hostNote {
					here, _, _ = strings.Cut(here, "\nagents run as this user")
				}
				if errHere != nil || errThere != nil || here == there {
					break
				}
			}
			require.NoError(t, errHere)
			require.NoError(t, errThere)
			assert.Equal(t, here, there)
			assert.Greater(t, asked, before, "the controller was asked")
			assert.NotEmpty(t, there)
		})
	}

	out, err := run(true, StatusOptions{IssueArg: "9"})
	require.ErrorContains(t, err, "9")
	assert.Equal(t, int(exitcode.Usage), cmdutil.ExitCode(err), "a refusal ends as it would here")
	assert.Empty(t, out)
	_, local := run(false, StatusOptions{IssueArg: "9"})
	assert.Equal(t, cmdutil.ExitCode(local), cmdutil.ExitCode(err))
}
