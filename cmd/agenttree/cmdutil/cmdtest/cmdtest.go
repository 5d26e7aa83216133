// Package cmdtest is what the command groups' unit tests share: an App
// over a real git repository (a clone of a bare origin) holding one of
// testdata/pipelines, with its output captured, and a way to run a
// command's flag parsing alone, as cli/cli's NewCmd tests do.
package cmdtest

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/cmd/agenttree/cmdutil"
	"github.com/agenttree/agenttree/internal/gittest"
	"github.com/agenttree/agenttree/internal/testpipeline"
	"github.com/agenttree/agenttree/sessions/tmux/tmuxtest"
	"github.com/agenttree/agenttree/stages"
)

// Workspace is an App in a work tree whose config is a test pipeline.
type Workspace struct {
	App *cmdutil.App
	// Dir is the work tree (the clone) and Origin its bare origin.
	Dir, Origin string
	// Out and ErrOut are what the App printed.
	Out, ErrOut *bytes.Buffer
	// Env is the whole environment the App sees; tests may change it.
	Env map[string]string
}

// New is a workspace over testdata/pipelines/PIPELINE.yaml, committed on
// main and pushed, run by a person (an empty environment).
func New(t testing.TB, pipeline string) *Workspace {
	t.Helper()
	return NewWith(t, testpipeline.Read(t, pipeline))
}

// NewWith is a workspace over the config text.
func NewWith(t testing.TB, config string) *Workspace {
	t.Helper()
	gittest.Require(t)
	bare, clone := gittest.NewRemote(t)
	gittest.Commit(t, clone, stages.FileName, config, "the pipeline")
	gittest.Run(t, clone, "push", "-q", "origin", "main")
	w := &Workspace{Dir: clone, Origin: bare, Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}, Env: map[string]string{}}
	w.App = &cmdutil.App{WD: clone, Getenv: func(k string) string { return w.Env[k] },
		In: strings.NewReader(""), Out: w.Out, ErrOut: w.ErrOut}
	return w
}

// Config is the path of the workspace's config.
func (w *Workspace) Config() string { return filepath.Join(w.Dir, stages.FileName) }

// Write writes text to the file at rel under the work tree.
func (w *Workspace) Write(t testing.TB, rel, text string) {
	t.Helper()
	path := filepath.Join(w.Dir, rel)
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
}

// Reset forgets what the App printed and what it worked out, for a second
// command in the same workspace.
func (w *Workspace) Reset() {
	w.Out.Reset()
	w.ErrOut.Reset()
	a := w.App
	w.App = &cmdutil.App{WD: a.WD, Getenv: a.Getenv, In: a.In, Out: a.Out, ErrOut: a.ErrOut}
}

// Tmux is the socket of a private tmux server, started with one idle
// session and killed when the test ends: "tmux: {socket: PATH}" in a
// config keeps the commands off the user's own server.
func Tmux(t testing.TB) string {
	t.Helper()
	return tmuxtest.Server(t)
}

// Parse runs cmd with args as the CLI would, its output discarded, and
// returns the error its flags, arguments or RunE gave: a command made with
// a runF that keeps its options tests what the flags fill in.
func Parse(cmd *cobra.Command, args ...string) error {
	cmd.SetArgs(args)
	cmd.SetIn(strings.NewReader(""))
	cmd.SetOut(&bytes.Buffer{})
	cmd.SetErr(&bytes.Buffer{})
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	_, err := cmd.ExecuteC()
	return err
}

// Options runs the command newCmd makes with args, with a runF that keeps
// its options, and returns them with their App left out (nil when the
// command did not get as far as its run): what the flags and arguments
// filled in.
func Options[O any](newCmd func(*cmdutil.App, func(context.Context, *O) error) *cobra.Command, args ...string) (*O, error) {
	var got *O
	err := Parse(newCmd(&cmdutil.App{}, func(_ context.Context, o *O) error { got = o; return nil }), args...)
	if got != nil {
		if app := reflect.ValueOf(got).Elem().FieldByName("App"); app.IsValid() {
			app.SetZero()
		}
	}
	return got, err
}

// Flags is one case of a table that checks what a command's flags fill
// in: Run parses (Flagged), and its options equal Want, or its error
// holds Err.
type Flags struct {
	Name string
	Run  func() (any, error)
	Want any
	Err  string
}

// Flagged is Options for a case of a Flags table: newCmd with args,
// parsed when the case runs.
func Flagged[O any](newCmd func(*cmdutil.App, func(context.Context, *O) error) *cobra.Command, args ...string) func() (any, error) {
	return func() (any, error) { return Options(newCmd, args...) }
}

// CheckFlags runs a table of Flags cases, each a subtest.
func CheckFlags(t *testing.T, cases []Flags) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.Name, func(t *testing.T) {
			got, err := tt.Run()
			if tt.Err != "" {
				require.ErrorContains(t, err, tt.Err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.Want, got)
		})
	}
}
