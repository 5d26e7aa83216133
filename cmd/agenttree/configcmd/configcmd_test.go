package configcmd

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/cmd/agenttree/cmdutil"
	"github.com/agenttree/agenttree/cmd/agenttree/cmdutil/cmdtest"
	"github.com/agenttree/agenttree/internal/exitcode"
	"github.com/agenttree/agenttree/internal/gittest"
	"github.com/agenttree/agenttree/stages"
)

func TestMain(m *testing.M) {
	gittest.IsolateProcess()
	os.Exit(m.Run())
}

func TestNewCmds(t *testing.T) {
	tests := []struct {
		name string
		// run makes the command with a runF that keeps its options, and
		// returns them as they were when it ran.
		run  func(args ...string) (any, error)
		args []string
		want any
		err  string
	}{
		{name: "init", run: parse(newCmdInit), want: &InitOptions{}},
		{name: "init DIR", run: parse(newCmdInit), args: []string{"../shop", "--template", "review-loop", "--force"},
			want: &InitOptions{Dir: "../shop", Template: "review-loop", Force: true}},
		{name: "init two DIRs", run: parse(newCmdInit), args: []string{"a", "b"}, err: "DIR"},
		{name: "validate", run: parse(newCmdValidate), args: []string{"--json"}, want: &ValidateOptions{JSON: true}},
		{name: "validate takes no argument", run: parse(newCmdValidate), args: []string{"x"}, err: "x"},
		{name: "stages", run: parse(newCmdStages), want: &StagesOptions{}},
		{name: "graph", run: parse(newCmdGraph), want: &GraphOptions{Format: "mermaid"}},
		{name: "graph dot", run: parse(newCmdGraph), args: []string{"--format", "dot", "--flow", "quick"}, want: &GraphOptions{Format: "dot", Flow: "quick"}},
		{name: "schema", run: parse(newCmdSchema), want: &SchemaOptions{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.run(tt.args...)
			if tt.err != "" {
				require.ErrorContains(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

// parse is cmdtest.Options for a table of commands.
func parse[O any](newCmd func(*cmdutil.App, func(context.Context, *O) error) *cobra.Command) func(args ...string) (any, error) {
	return func(args ...string) (any, error) {
		o, err := cmdtest.Options(newCmd, args...)
		return o, err
	}
}

// gitRepo is a fresh git repository named shop, with no commit yet.
func gitRepo(t *testing.T) string {
	t.Helper()
	gittest.Require(t)
	dir := filepath.Join(t.TempDir(), "shop")
	require.NoError(t, os.Mkdir(dir, 0o755))
	gittest.Run(t, dir, "init", "-q", "-b", "trunk")
	return dir
}

func app(wd string) (*cmdutil.App, *bytes.Buffer, *bytes.Buffer) {
	var out, errOut bytes.Buffer
	return &cmdutil.App{WD: wd, Getenv: func(string) string { return "" }, In: strings.NewReader(""), Out: &out, ErrOut: &errOut}, &out, &errOut
}

func TestInitRun(t *testing.T) {
	tests := []struct {
		name string
		opts InitOptions
		// before is a config already there; in the directory init writes
		// to, relative to the repository.
		before, in string
		// out is the output's first line; project and branch what the
		// config says; err the error.
		out, project, branch, err string
		code                      exitcode.Code
	}{
		{name: "the starter", out: "wrote {dir}/.agenttree.yaml: the reference pipeline (backlog → implement.code → implement.feedback → pr_ready → implementation_review → accepted)\n",
			project: "project: shop\n", branch: "default_branch: trunk\n"},
		{name: "a template, in a relative DIR", opts: InitOptions{Dir: "sub", Template: "review-loop"}, in: "sub", out: "wrote {dir}/.agenttree.yaml: the review-loop example ("},
		{name: "an unknown template", opts: InitOptions{Template: "nope"}, err: "nope", code: exitcode.Usage},
		{name: "over a config", before: "project: mine\n", err: "--force", code: exitcode.Usage},
		{name: "over a config, forced", opts: InitOptions{Force: true}, before: "project: mine\n", out: "wrote {dir}/.agenttree.yaml: the reference pipeline"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			repo := gitRepo(t)
			dir := filepath.Join(repo, tt.in)
			require.NoError(t, os.MkdirAll(dir, 0o755))
			path := filepath.Join(dir, stages.FileName)
			if tt.before != "" {
				require.NoError(t, os.WriteFile(path, []byte(tt.before), 0o644))
			}
			a, out, _ := app(repo)
			tt.opts.App = a
			err := initRun(t.Context(), &tt.opts)
			if tt.err != "" {
				require.ErrorContains(t, err, tt.err)
				assert.Equal(t, int(tt.code), cmdutil.ExitCode(err))
				assert.NoFileExists(t, filepath.Join(dir, "_agenttree", "skills", "backlog.md"), "nothing is written")
				if tt.before != "" {
					assert.Equal(t, tt.before, read(t, path))
				}
				return
			}
			require.NoError(t, err)
			assert.True(t, strings.HasPrefix(out.String(), strings.ReplaceAll(tt.out, "{dir}", dir)), out.String())
			config := read(t, path)
			assert.True(t, strings.HasPrefix(config, SchemaLine), "the schema line comes first")
			assert.Contains(t, config, tt.project)
			assert.Contains(t, config, tt.branch)
			assert.Contains(t, read(t, filepath.Join(dir, ".gitignore")), "_agenttree/")
		})
	}
}

func TestInitRunOutsideARepository(t *testing.T) {
	a, out, _ := app(t.TempDir())
	err := initRun(t.Context(), &InitOptions{App: a})
	require.Error(t, err)
	assert.Equal(t, int(exitcode.Usage), cmdutil.ExitCode(err))
	assert.Empty(t, out.String())
}

func read(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(data)
}

func TestValidateRun(t *testing.T) {
	tests := []struct {
		name   string
		config string
		opts   ValidateOptions
		// out and errOut hold these; code is the exit code
		out, errOut []string
		code        int
	}{
		{name: "valid", config: "stages:\n  - name: work\n  - name: done\n    terminal: completion\n",
			out: []string{".agenttree.yaml: ok (", " form, 2 stages, flows: default)\n"}},
		{name: "two mistakes, each where it is", config: "stages:\n  - name: work\n    pre_completion:\n      - no_such_hook:\n  - name: work\n",
			errOut: []string{".agenttree.yaml:4:", "no_such_hook", ".agenttree.yaml:5:", ": 2 errors"}, code: int(exitcode.Usage)},
		{name: "a syntax error", config: "stages: [\n", errOut: []string{".agenttree.yaml:"}, code: int(exitcode.Usage)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := cmdtest.NewWith(t, tt.config)
			tt.opts.App = w.App
			err := validateRun(t.Context(), &tt.opts)
			if tt.code != 0 {
				assert.Equal(t, tt.code, cmdutil.ExitCode(err), "%v", err)
			} else {
				require.NoError(t, err)
			}
			for _, s := range tt.out {
				assert.Contains(t, w.Out.String(), s)
			}
			for _, s := range tt.errOut {
				assert.Contains(t, w.ErrOut.String(), s)
			}
		})
	}
}

func TestValidateRunJSON(t *testing.T) {
	w := cmdtest.NewWith(t, "stages:\n  - name: work\n    pre_completion:\n      - no_such_hook:\n")
	err := validateRun(t.Context(), &ValidateOptions{App: w.App, JSON: true})
	assert.Equal(t, int(exitcode.Usage), cmdutil.ExitCode(err))
	var rep ValidateReport
	require.NoError(t, json.Unmarshal(w.Out.Bytes(), &rep), w.Out.String())
	assert.False(t, rep.Valid)
	require.NotEmpty(t, rep.Diagnostics)
	assert.Equal(t, 4, rep.Diagnostics[0].Line)
	assert.Empty(t, w.ErrOut.String(), "the report holds it all")
}

func TestStagesRun(t *testing.T) {
	w := cmdtest.New(t, "cli")
	require.NoError(t, stagesRun(t.Context(), &StagesOptions{App: w.App}))
	out := w.Out.String()
	assert.True(t, strings.HasPrefix(out, "flow default (default):\n  backlog "), out)
	assert.Contains(t, out, "flow quick:\n  backlog ")
	assert.Contains(t, out, "\n  implement.code ")

	w.Reset()
	require.NoError(t, stagesRun(t.Context(), &StagesOptions{App: w.App, JSON: true}))
	var rep stagesReport
	require.NoError(t, json.Unmarshal(w.Out.Bytes(), &rep))
	assert.Equal(t, "default", rep.DefaultFlow)
	assert.Equal(t, []string{"backlog", "implement.code", "accepted"}, rep.Flows["quick"])
}

func TestGraphRun(t *testing.T) {
	tests := []struct {
		name string
		opts GraphOptions
		// start is how the output starts; err the error
		start, err string
		code       exitcode.Code
	}{
		{name: "mermaid", opts: GraphOptions{Format: "mermaid"}, start: "flowchart LR\n"},
		{name: "dot", opts: GraphOptions{Format: "dot", Flow: "quick"}, start: "digraph "},
		{name: "an unknown format", opts: GraphOptions{Format: "svg"}, err: "svg", code: exitcode.Usage},
		{name: "an unknown flow", opts: GraphOptions{Format: "dot", Flow: "nope"}, err: "nope"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := cmdtest.New(t, "cli")
			tt.opts.App = w.App
			err := graphRun(t.Context(), &tt.opts)
			if tt.err != "" {
				require.ErrorContains(t, err, tt.err)
				if tt.code != 0 {
					assert.Equal(t, int(tt.code), cmdutil.ExitCode(err))
				}
				assert.Empty(t, w.Out.String())
				return
			}
			require.NoError(t, err)
			assert.True(t, strings.HasPrefix(w.Out.String(), tt.start), w.Out.String())
			assert.Contains(t, w.Out.String(), "implement.code")
		})
	}
}

func TestSchemaRun(t *testing.T) {
	a, out, _ := app(t.TempDir())
	require.NoError(t, schemaRun(t.Context(), &SchemaOptions{App: a}))
	var schema map[string]any
	require.NoError(t, json.Unmarshal(out.Bytes(), &schema))
	assert.Equal(t, "https://json-schema.org/draft/2020-12/schema", schema["$schema"])
}
