package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/internal/gittest"
	"github.com/agenttree/agenttree/internal/statedir"
	"github.com/agenttree/agenttree/internal/testpipeline"
	"github.com/agenttree/agenttree/stages"
)

// notesDone satisfies implement.code's gates.
const notesDone = "# Notes\n\n## Done\n\nWrote the login form.\n"

// Environments. The tests never read the real environment.
var (
	humanEnv     = map[string]string{}
	agentEnv     = map[string]string{"AGENTTREE_ROLE": "developer"}
	containerEnv = map[string]string{"AGENTTREE_CONTAINER": "1"}
	reviewerEnv  = map[string]string{"AGENTTREE_ROLE": "reviewer"}
	controlEnv   = map[string]string{"AGENTTREE_ROLE": "controller"}
)

// cliResult is what one in-process invocation of the CLI produced.
type cliResult struct {
	code           int
	stdout, stderr string
}

// workspace is a temp directory holding a config; its state directory is
// _agenttree/ beside the config.
type workspace struct {
	dir, config string
}

func newWorkspace(t *testing.T, config string) *workspace {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, stages.FileName)
	require.NoError(t, os.WriteFile(path, []byte(config), 0o644))
	return &workspace{dir: dir, config: path}
}

// invoke runs the CLI in process, in the test's directory, with an
// environment built only from env.
func invoke(t *testing.T, env map[string]string, args ...string) cliResult {
	t.Helper()
	wd, err := os.Getwd()
	require.NoError(t, err)
	return invokeIn(t, wd, env, args...)
}

// invokeIn runs the CLI in process in directory wd.
func invokeIn(t *testing.T, wd string, env map[string]string, args ...string) cliResult {
	t.Helper()
	var stdout, stderr bytes.Buffer
	getenv := func(k string) string { return env[k] }
	code := run(context.Background(), wd, args, getenv, strings.NewReader(""), &stdout, &stderr)
	return cliResult{code: code, stdout: stdout.String(), stderr: stderr.String()}
}

// run runs the CLI against w's config: a person's command passes it with
// --config; an agent's runs in w's directory and finds it there, as agents
// may not choose their config.
func (w *workspace) run(t *testing.T, env map[string]string, args ...string) cliResult {
	t.Helper()
	if engine.ActorFromEnv(func(k string) string { return env[k] }).Kind == engine.ActorAgent {
		return invokeIn(t, w.dir, env, args...)
	}
	return invoke(t, env, append([]string{"--config", w.config}, args...)...)
}

// create makes an issue through the CLI and returns its id.
func (w *workspace) create(t *testing.T, title string, args ...string) int {
	t.Helper()
	r := w.run(t, humanEnv, append([]string{"issue", "create", title, "--json"}, args...)...)
	require.Equal(t, 0, r.code, "issue create: %s", r.stderr)
	var iss issues.Issue
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &iss), r.stdout)
	return iss.ID
}

// issueDir is the directory of the issue's stage documents.
func (w *workspace) issueDir(id int) string {
	return statedir.Layout{Root: filepath.Join(w.dir, "_agenttree")}.Docs(id)
}

// hostDir is the directory of the issue's own files (issue.yaml, ...).
func (w *workspace) hostDir(id int) string {
	return statedir.Layout{Root: filepath.Join(w.dir, "_agenttree")}.Issue(id)
}

func itoa(i int) string { return strconv.Itoa(i) }

// writeDoc writes a stage document into the issue's directory.
func (w *workspace) writeDoc(t *testing.T, id int, name, text string) {
	t.Helper()
	require.NoError(t, os.WriteFile(filepath.Join(w.issueDir(id), name), []byte(text), 0o644))
}

// issue reads issue.yaml straight from disk.
func (w *workspace) issue(t *testing.T, id int) issues.Issue {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(w.hostDir(id), "issue.yaml"))
	require.NoError(t, err)
	var iss issues.Issue
	require.NoError(t, yaml.Unmarshal(data, &iss))
	return iss
}

// decodeObject parses a JSON object, keeping raw values.
func decodeObject(t *testing.T, text string) map[string]json.RawMessage {
	t.Helper()
	var m map[string]json.RawMessage
	require.NoError(t, json.Unmarshal([]byte(text), &m), "not a JSON object: %s", text)
	return m
}

func keysOf[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func TestStagesJSON(t *testing.T) {
	tests := []struct {
		name   string
		config string
		want   string
	}{
		{
			name:   "list form with substages, a redirect_only node and an extra flow",
			config: testpipeline.Read(t, "cli"),
			want: `{
				"default_flow": "default",
				"flows": {
					"default": ["backlog", "plan.draft", "plan.review", "implement.code", "implement.feedback",
						"security", "implementation_review", "accepted", "not_doing"],
					"quick": ["backlog", "implement.code", "accepted"]
				}
			}`,
		},
		{
			name: "default_flow names another flow",
			config: `stages:
  - name: a
  - name: b
    redirect_only: true
  - name: c
    terminal: completion
flows:
  short: [a, c]
default_flow: short
`,
			want: `{"default_flow": "short", "flows": {"default": ["a", "b", "c"], "short": ["a", "c"]}}`,
		},
		{
			name: "compatible map form",
			config: `flows:
  default:
    stages:
      backlog: {is_parking_lot: true}
      implement:
        substages:
          code:
          feedback:
      accepted: {is_completion: true}
      not_doing: {is_abandon: true, redirect_only: true}
  quick: [backlog, implement.code, accepted]
`,
			want: `{
				"default_flow": "default",
				"flows": {
					"default": ["backlog", "implement.code", "implement.feedback", "accepted", "not_doing"],
					"quick": ["backlog", "implement.code", "accepted"]
				}
			}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorkspace(t, tt.config)
			r := w.run(t, humanEnv, "stages", "--json")
			require.Equal(t, 0, r.code, r.stderr)
			assert.JSONEq(t, tt.want, r.stdout)
		})
	}
}

var historyKeys = []string{"actor", "at", "from", "kind", "reason", "to"}

// checkIssueJSON checks the shape of an issue printed with --json and
// returns its history entries.
func checkIssueJSON(t *testing.T, text string, id int, title, flow, stage string, version int) []map[string]json.RawMessage {
	t.Helper()
	obj := decodeObject(t, text)
	for _, k := range []string{"id", "title", "flow", "stage", "version", "history"} {
		require.Contains(t, obj, k, "issue JSON lacks %q: %s", k, text)
	}
	var got struct {
		ID      int    `json:"id"`
		Title   string `json:"title"`
		Flow    string `json:"flow"`
		Stage   string `json:"stage"`
		Version int    `json:"version"`
	}
	require.NoError(t, json.Unmarshal([]byte(text), &got))
	assert.Equal(t, id, got.ID)
	assert.Equal(t, title, got.Title)
	assert.Equal(t, flow, got.Flow)
	assert.Equal(t, stage, got.Stage)
	assert.Equal(t, version, got.Version)

	var history []map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(obj["history"], &history), "history must be a list of objects: %s", obj["history"])
	for i, h := range history {
		assert.Equal(t, historyKeys, keysOf(h), "history[%d] keys", i)
	}
	return history
}

func str(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	var s string
	require.NoError(t, json.Unmarshal(raw, &s), "not a string: %s", raw)
	return s
}

func TestIssueCreateAndShowJSON(t *testing.T) {
	w := newWorkspace(t, testpipeline.Read(t, "cli"))

	r := w.run(t, humanEnv, "issue", "create", "Add login page", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	history := checkIssueJSON(t, r.stdout, 1, "Add login page", "default", "backlog", 1)
	require.Len(t, history, 1)
	assert.Equal(t, "", str(t, history[0]["from"]))
	assert.Equal(t, "backlog", str(t, history[0]["to"]))
	assert.Equal(t, "create", str(t, history[0]["kind"]))
	assert.Equal(t, "human", str(t, history[0]["actor"]))

	r = w.run(t, humanEnv, "issue", "create", "Fix logout", "--flow", "quick", "--stage", "implement.code", "--set", "hotfix=true", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	checkIssueJSON(t, r.stdout, 2, "Fix logout", "quick", "implement.code", 1)

	// One move, then show: the history grows by an advance with the actor.
	r = w.run(t, humanEnv, "next", "-i", "1")
	require.Equal(t, 0, r.code, r.stderr)
	r = w.run(t, humanEnv, "issue", "show", "1", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	history = checkIssueJSON(t, r.stdout, 1, "Add login page", "default", "plan.draft", 2)
	require.Len(t, history, 2)
	assert.Equal(t, "backlog", str(t, history[1]["from"]))
	assert.Equal(t, "plan.draft", str(t, history[1]["to"]))
	assert.Equal(t, "advance", str(t, history[1]["kind"]))
	assert.Equal(t, "human", str(t, history[1]["actor"]))

	r = w.run(t, humanEnv, "issue", "show", "2", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	checkIssueJSON(t, r.stdout, 2, "Fix logout", "quick", "implement.code", 1)

	r = w.run(t, humanEnv, "issue", "list", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	var list []issues.Issue
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &list))
	require.Len(t, list, 2)
	assert.Equal(t, []int{1, 2}, []int{list[0].ID, list[1].ID})
}

func TestIssueCreateRejectsBadRequests(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"unknown flow", []string{"issue", "create", "X", "--flow", "nope"}, `no flow named "nope"`},
		{"stage not in flow", []string{"issue", "create", "X", "--flow", "quick", "--stage", "plan.draft"}, `flow "quick" has no stage "plan.draft"`},
		{"blank title", []string{"issue", "create", "  "}, "needs a title"},
		{"bad --set", []string{"issue", "create", "X", "--set", "novalue"}, "NAME=VALUE"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorkspace(t, testpipeline.Read(t, "cli"))
			r := w.run(t, humanEnv, tt.args...)
			assert.Equal(t, 2, r.code)
			assert.Contains(t, r.stderr, tt.want)
			entries, _ := os.ReadDir(filepath.Join(w.dir, "_agenttree", "issues"))
			for _, e := range entries {
				assert.False(t, e.IsDir(), "no issue directory may be created, found %s", e.Name())
			}
		})
	}
}

// nextResult is the JSON `next` and `approve` print.
type nextResult struct {
	Issue   int      `json:"issue"`
	From    string   `json:"from"`
	To      string   `json:"to"`
	Status  string   `json:"status"`
	Reasons []string `json:"reasons"`
	Version int      `json:"version"`
	Kind    string   `json:"kind"`
}

// decodeNext checks the shape {"issue", "from", "to", "status", "reasons"}
// and decodes it.
func decodeNext(t *testing.T, text string) nextResult {
	t.Helper()
	obj := decodeObject(t, text)
	for _, k := range []string{"issue", "from", "to", "status", "reasons"} {
		require.Contains(t, obj, k, "result JSON lacks %q: %s", k, text)
	}
	var reasons []string
	require.NoError(t, json.Unmarshal(obj["reasons"], &reasons))
	require.NotNil(t, reasons, "reasons must be a list, never null: %s", text)
	var res nextResult
	require.NoError(t, json.Unmarshal([]byte(text), &res))
	return res
}

func TestNextJSONStatuses(t *testing.T) {
	tests := []struct {
		name     string
		stage    string
		flow     string
		env      map[string]string
		notes    string // written as notes.md when set
		status   string
		code     int
		to       string // "" means the issue stays where it is
		nReasons int    // -1: at least one
		reason   string // a fragment of the first reason
	}{
		{name: "human starts a parked issue", stage: "backlog", env: humanEnv, status: "advanced", code: 0, to: "plan.draft"},
		{name: "agent advances a plain substage", stage: "plan.draft", env: agentEnv, status: "advanced", code: 0, to: "plan.review"},
		{name: "agent passes both gates", stage: "implement.code", env: agentEnv, notes: notesDone, status: "advanced", code: 0, to: "implement.feedback"},
		{name: "agent passes gates in the quick flow", stage: "implement.code", flow: "quick", env: agentEnv, notes: notesDone, status: "advanced", code: 0, to: "accepted"},
		{name: "container agent passes gates", stage: "implement.code", env: containerEnv, notes: notesDone, status: "advanced", code: 0, to: "implement.feedback"},
		{name: "two gates failing on one missing file say it once", stage: "implement.code", env: agentEnv, status: "blocked", code: 1, nReasons: 1, reason: "notes.md"},
		{name: "one failing gate", stage: "implement.code", env: agentEnv, notes: "# Notes\n\n## Done\n\n", status: "blocked", code: 1, nReasons: 1, reason: `section "Done"`},
		{name: "agent at a human review substage", stage: "plan.review", env: agentEnv, status: "waiting", code: 3, nReasons: 1, reason: "human review"},
		{name: "container agent at a human review", stage: "implementation_review", env: containerEnv, status: "waiting", code: 3, nReasons: 1, reason: "human review"},
		{name: "agent in the parking lot", stage: "backlog", env: agentEnv, status: "waiting", code: 3, nReasons: 1, reason: "parked"},
		{name: "agent at a stage of another role", stage: "security", env: agentEnv, status: "waiting", code: 3, nReasons: 1, reason: "role reviewer"},
		{name: "controller at an agent stage", stage: "plan.draft", env: controlEnv, status: "waiting", code: 3, nReasons: 1, reason: "not a controller stage"},
		{name: "the owning role advances", stage: "security", env: reviewerEnv, status: "advanced", code: 0, to: "implementation_review"},
		{name: "human at a human review", stage: "implementation_review", env: humanEnv, status: "advanced", code: 0, to: "accepted"},
		{name: "terminal stage", stage: "accepted", env: agentEnv, status: "final", code: 0, nReasons: 1, reason: "terminal"},
		{name: "redirect-only terminal", stage: "not_doing", env: humanEnv, status: "final", code: 0, nReasons: 1, reason: "terminal"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorkspace(t, testpipeline.Read(t, "cli"))
			args := []string{"--stage", tt.stage}
			if tt.flow != "" {
				args = append(args, "--flow", tt.flow)
			}
			id := w.create(t, "Add login page", args...)
			if tt.notes != "" {
				w.writeDoc(t, id, "notes.md", tt.notes)
			}
			before := w.issue(t, id)

			r := w.run(t, tt.env, "next", "-i", "1", "--json")
			require.Equal(t, tt.code, r.code, "stdout: %s\nstderr: %s", r.stdout, r.stderr)
			res := decodeNext(t, r.stdout)
			assert.Equal(t, id, res.Issue)
			assert.Equal(t, tt.status, res.Status)
			assert.Equal(t, tt.stage, res.From)

			after := w.issue(t, id)
			if tt.status == "advanced" {
				assert.Equal(t, tt.to, res.To)
				assert.Equal(t, tt.to, after.Stage)
				assert.Equal(t, before.Version+1, after.Version)
				assert.Equal(t, after.Version, res.Version)
				last := after.History[len(after.History)-1]
				assert.Equal(t, tt.stage, last.From)
				assert.Equal(t, tt.to, last.To)
			} else {
				assert.Equal(t, before, after, "a %s issue must not change", tt.status)
				if tt.status != "blocked" {
					assert.Equal(t, tt.stage, res.To)
				}
			}
			switch {
			case tt.nReasons > 0:
				require.Len(t, res.Reasons, tt.nReasons, "reasons: %q", res.Reasons)
			case tt.nReasons < 0:
				require.NotEmpty(t, res.Reasons)
			}
			if tt.reason != "" {
				require.NotEmpty(t, res.Reasons)
				assert.Contains(t, res.Reasons[0], tt.reason)
			}
		})
	}
}

func TestNextDryRunDoesNotMove(t *testing.T) {
	w := newWorkspace(t, testpipeline.Read(t, "cli"))
	id := w.create(t, "Add login page", "--stage", "implement.code")
	w.writeDoc(t, id, "notes.md", notesDone)
	before := w.issue(t, id)
	r := w.run(t, agentEnv, "next", "-i", "1", "--dry-run", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	res := decodeNext(t, r.stdout)
	assert.Equal(t, "advanced", res.Status)
	assert.Equal(t, "implement.feedback", res.To)
	assert.Equal(t, before, w.issue(t, id))
}

// positionRE matches the file:line:col a config diagnostic starts with.
func positionRE(path string) *regexp.Regexp {
	return regexp.MustCompile(regexp.QuoteMeta(path) + `:[1-9][0-9]*:[1-9][0-9]*: error: `)
}

func TestBadConfigIsRejectedAndNothingIsWritten(t *testing.T) {
	configs := []struct {
		name   string
		config string
		want   string // a fragment of the diagnostic
		line   int    // the line the diagnostic must point at; 0: any
	}{
		{
			name: "unknown hook",
			config: `stages:
  - name: a
    pre_completion:
      - file_exist: notes.md
  - name: b
`,
			want: "unknown hook `file_exist`", line: 4,
		},
		{
			name: "unknown key",
			config: `stages:
  - name: a
    colour: red
  - name: b
`,
			want: "unknown key `colour`", line: 3,
		},
		{
			name: "unknown key at the top level",
			config: `stage:
  - name: a
`,
			want: "unknown key `stage`", line: 1,
		},
		{
			name: "bad flow reference",
			config: `stages:
  - name: a
  - name: b
flows:
  quick: [a, c]
`,
			want: `references unknown stage "c"`, line: 5,
		},
		{
			name: "bad step_back_to reference",
			config: `stages:
  - name: a
    on_failure:
      step_back_to: nowhere
  - name: b
`,
			want: `unknown stage "nowhere"`, line: 4,
		},
		{
			name: "YAML syntax error",
			config: `stages:
  - name: a
	- name: b
`,
			want: "fix the YAML syntax",
		},
		{
			name: "unknown placeholder",
			config: `stages:
  - name: a
    pre_completion:
      - step_back: {to: b, message: "CI failed: {{failed_chekcs}}"}
  - name: b
`,
			want: "{{failed_chekcs}}", line: 4,
		},
		{
			name: "unparsable condition",
			config: `stages:
  - name: a
  - name: b
    condition: "needs_ui and and"
`,
			want: "cannot parse condition", line: 4,
		},
		{
			name: "unparsable when",
			config: `stages:
  - name: a
    pre_completion:
      - file_exists: {file: notes.md, when: "a ==="}
  - name: b
`,
			want: "cannot parse condition", line: 4,
		},
		{
			name: "unknown hook parameter",
			config: `stages:
  - name: a
    pre_completion:
      - section_check: {file: notes.md, section: Done, expect: empty, colour: red}
  - name: b
`,
			want: "has no parameter `colour`", line: 4,
		},
	}
	commands := [][]string{
		{"next", "-i", "1"},
		{"issue", "create", "Add login page"},
		{"issue", "list"},
		{"approve", "1"},
		{"status"},
		{"stages"},
		{"validate"},
		{"graph", "--format", "dot"},
	}
	for _, c := range configs {
		t.Run(c.name, func(t *testing.T) {
			w := newWorkspace(t, c.config)
			for _, args := range commands {
				r := w.run(t, humanEnv, args...)
				assert.Equal(t, 2, r.code, "%v: stdout %s stderr %s", args, r.stdout, r.stderr)
				assert.Regexp(t, positionRE(w.config), r.stderr, "%v must name file:line:col", args)
				assert.Contains(t, r.stderr, c.want, "%v", args)
				if c.line > 0 {
					assert.Contains(t, r.stderr, w.config+":"+itoa(c.line)+":", "%v: wrong line", args)
				}
				_, err := os.Stat(filepath.Join(w.dir, "_agenttree"))
				assert.ErrorIs(t, err, os.ErrNotExist, "%v created _agenttree/ for a bad config", args)
			}
			// The config is also rejected through AGENTTREE_CONFIG.
			r := invoke(t, map[string]string{"AGENTTREE_CONFIG": w.config}, "next", "-i", "1")
			assert.Equal(t, 2, r.code)
			assert.Regexp(t, positionRE(w.config), r.stderr)
			entries, err := os.ReadDir(w.dir)
			require.NoError(t, err)
			require.Len(t, entries, 1, "only the config may be in the directory")
		})
	}
}

// diagnostic is one entry of `validate --json`.
type diagnostic struct {
	Pos struct {
		File string `json:"file"`
		Line int    `json:"line"`
		Col  int    `json:"col"`
	} `json:"pos"`
	Severity string `json:"severity"`
	Message  string `json:"message"`
	Hint     string `json:"hint"`
}

type validateJSON struct {
	File     string       `json:"file"`
	Valid    bool         `json:"valid"`
	Flows    []string     `json:"flows"`
	Errors   []diagnostic `json:"errors"`
	Warnings []diagnostic `json:"warnings"`
}

func TestValidateJSONListsEveryError(t *testing.T) {
	w := newWorkspace(t, `stages:
  - name: a
    colour: red
    pre_completion:
      - file_exist: x.md
  - name: b
    condition: "x and and"
    pre_completion:
      - step_back: {to: a, message: "{{nope}}"}
flows:
  quick: [a, c]
`)
	r := w.run(t, humanEnv, "validate", "--json")
	require.Equal(t, 2, r.code, r.stderr)
	var rep validateJSON
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &rep), r.stdout)
	assert.False(t, rep.Valid)
	assert.Equal(t, w.config, rep.File)
	type where struct {
		line    int
		message string
	}
	want := []where{
		{3, "unknown key `colour`"},
		{5, "unknown hook `file_exist`"},
		{7, "cannot parse condition"},
		{9, "{{nope}}"},
		{11, `unknown stage "c"`},
	}
	require.Len(t, rep.Errors, len(want), "errors: %+v", rep.Errors)
	for i, d := range rep.Errors {
		assert.Equal(t, "error", d.Severity)
		assert.Equal(t, w.config, d.Pos.File)
		assert.Equal(t, want[i].line, d.Pos.Line, "error %d: %s", i, d.Message)
		assert.Positive(t, d.Pos.Col)
		assert.Contains(t, d.Message, want[i].message)
	}
	assert.Equal(t, "did you mean `file_exists`?", rep.Errors[1].Hint)
	_, err := os.Stat(filepath.Join(w.dir, "_agenttree"))
	assert.ErrorIs(t, err, os.ErrNotExist)

	// The same config without --json: every error on stderr, exit 2.
	r = w.run(t, humanEnv, "validate")
	assert.Equal(t, 2, r.code)
	for _, x := range want {
		assert.Contains(t, r.stderr, w.config+":"+itoa(x.line)+":")
	}

	// A good config is valid.
	good := newWorkspace(t, testpipeline.Read(t, "cli"))
	r = good.run(t, humanEnv, "validate", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	rep = validateJSON{}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &rep))
	assert.True(t, rep.Valid)
	assert.Empty(t, rep.Errors)
	assert.NotNil(t, rep.Errors, "errors must be a list")
	assert.Equal(t, []string{"default", "quick"}, rep.Flows)
}

func TestApprove(t *testing.T) {
	tests := []struct {
		name   string
		stage  string
		env    map[string]string
		code   int
		status string // "" when the command fails before deciding
		to     string // the stage after; the same stage when nothing moved
		errMsg string
	}{
		{name: "agent cannot approve", stage: "implementation_review", env: agentEnv, code: 3, status: "waiting", to: "implementation_review"},
		{name: "container agent cannot approve", stage: "plan.review", env: containerEnv, code: 3, status: "waiting", to: "plan.review"},
		{name: "controller cannot approve", stage: "plan.review", env: controlEnv, code: 3, status: "waiting", to: "plan.review"},
		{name: "human approves a review substage", stage: "plan.review", env: humanEnv, code: 0, status: "advanced", to: "implement.code"},
		{name: "human approves a review stage", stage: "implementation_review", env: humanEnv, code: 0, status: "advanced", to: "accepted"},
		{name: "human approves a manager alias role", stage: "implementation_review", env: map[string]string{"AGENTTREE_ROLE": "manager"}, code: 0, status: "advanced", to: "accepted"},
		{name: "nothing to approve outside a review", stage: "plan.draft", env: humanEnv, code: 2, to: "plan.draft", errMsg: "not at a human review"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorkspace(t, testpipeline.Read(t, "cli"))
			id := w.create(t, "Add login page", "--stage", tt.stage)
			before := w.issue(t, id)
			r := w.run(t, tt.env, "approve", "1", "--json")
			require.Equal(t, tt.code, r.code, "stdout %s stderr %s", r.stdout, r.stderr)
			after := w.issue(t, id)
			assert.Equal(t, tt.to, after.Stage)
			if tt.errMsg != "" {
				assert.Contains(t, r.stderr, tt.errMsg)
			}
			if tt.status == "" {
				assert.Equal(t, before, after)
				return
			}
			res := decodeNext(t, r.stdout)
			assert.Equal(t, tt.status, res.Status)
			if tt.status != "advanced" {
				assert.Equal(t, before, after, "a refused approval must not change the issue")
				require.NotEmpty(t, res.Reasons)
				assert.Contains(t, res.Reasons[0], "only a person can approve")
				return
			}
			assert.Equal(t, tt.to, res.To)
			assert.Equal(t, before.Version+1, after.Version)
			last := after.History[len(after.History)-1]
			assert.Equal(t, issues.HistoryEntry{From: tt.stage, To: tt.to, Kind: "approve", Actor: "human", Reason: last.Reason, At: last.At}, last)
		})
	}
}

func TestAgentCannotLeaveHumanReviewSubstage(t *testing.T) {
	w := newWorkspace(t, testpipeline.Read(t, "cli"))
	id := w.create(t, "Add login page", "--stage", "plan.draft")
	r := w.run(t, agentEnv, "next", "-i", "1")
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, "plan.review", w.issue(t, id).Stage)
	before := w.issue(t, id)

	// Neither next nor approve, however often, moves it for an agent.
	for range 3 {
		r = w.run(t, agentEnv, "next", "-i", "1")
		assert.Equal(t, 3, r.code, r.stdout)
		assert.Contains(t, r.stdout, "waiting at plan.review")
		r = w.run(t, agentEnv, "approve", "1")
		assert.Equal(t, 3, r.code, r.stdout)
	}
	assert.Equal(t, before, w.issue(t, id))

	r = w.run(t, humanEnv, "approve", "1")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "implement.code", w.issue(t, id).Stage)
}

func TestUnknownIssue(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"next", []string{"next", "-i", "42"}, []string{"issue 42", "not found", "agenttree issue list"}},
		{"next --json", []string{"next", "-i", "42", "--json"}, []string{"issue 42", "not found", "agenttree issue list"}},
		{"show", []string{"issue", "show", "42"}, []string{"issue 42", "not found", "agenttree issue list"}},
		{"approve", []string{"approve", "42"}, []string{"issue 42", "not found", "agenttree issue list"}},
		{"status", []string{"status", "42"}, []string{"issue 42", "not found", "agenttree issue list"}},
		{"not a number", []string{"next", "-i", "abc"}, []string{`"abc" is not an issue id`}},
		{"zero", []string{"issue", "show", "0"}, []string{`"0" is not an issue id`}},
		{"bad AGENTTREE_ISSUE", []string{"next"}, []string{"AGENTTREE_ISSUE", `"x1"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorkspace(t, testpipeline.Read(t, "cli"))
			w.create(t, "Add login page")
			r := w.run(t, map[string]string{"AGENTTREE_ISSUE": "x1"}, tt.args...)
			assert.Equal(t, 2, r.code, "stdout %s stderr %s", r.stdout, r.stderr)
			if wantsJSON(tt.args) {
				var out struct {
					Error    string `json:"error"`
					ExitCode int    `json:"exit_code"`
				}
				require.NoError(t, json.Unmarshal([]byte(r.stdout), &out), "JSON callers get JSON errors: %s", r.stdout)
				assert.Equal(t, 2, out.ExitCode)
				assert.Contains(t, out.Error, "not found")
			} else {
				assert.Empty(t, r.stdout)
			}
			for _, s := range tt.want {
				assert.Contains(t, r.stderr, s)
			}
			_, err := os.Stat(filepath.Join(w.dir, "_agenttree", "issues", "042"))
			assert.ErrorIs(t, err, os.ErrNotExist)
		})
	}
}

func TestNextResolvesIssueFromGitBranch(t *testing.T) {
	gittest.Require(t)
	w := newWorkspace(t, testpipeline.Read(t, "cli"))
	for range 12 {
		w.create(t, "Add login page", "--stage", "plan.draft")
	}
	gittest.Run(t, w.dir, "init", "-q", "-b", "main")
	gittest.Run(t, w.dir, "commit", "-q", "--allow-empty", "-m", "initial")

	tests := []struct {
		branch string
		env    map[string]string
		want   int // 0: no issue can be resolved
	}{
		{branch: "issue-001-login", env: agentEnv, want: 1},
		{branch: "002-login", env: agentEnv, want: 2},
		{branch: "issue-3", env: agentEnv, want: 3},
		{branch: "issue-012_signup", env: agentEnv, want: 12},
		{branch: "feature/issue-004-x", env: agentEnv, want: 4},
		{branch: "issue-005-login-env", env: map[string]string{"AGENTTREE_ROLE": "developer", "AGENTTREE_ISSUE": "6"}, want: 6},
		{branch: "main-work", env: agentEnv},
		{branch: "issue-x", env: agentEnv},
	}
	for _, tt := range tests {
		t.Run(tt.branch, func(t *testing.T) {
			gittest.Run(t, w.dir, "checkout", "-q", "-b", tt.branch)
			r := w.run(t, tt.env, "next", "--dry-run", "--json")
			if tt.want == 0 {
				assert.Equal(t, 2, r.code, r.stdout)
				assert.Contains(t, r.stderr, "which issue?")
				assert.Contains(t, r.stderr, tt.branch, "the message names the current branch")
				return
			}
			require.Equal(t, 0, r.code, "stdout %s stderr %s", r.stdout, r.stderr)
			res := decodeNext(t, r.stdout)
			assert.Equal(t, tt.want, res.Issue)
			assert.Equal(t, "plan.review", res.To)
		})
	}

	// A real move from the branch, then -i wins over the branch.
	gittest.Run(t, w.dir, "checkout", "-q", "-b", "issue-007-real")
	r := w.run(t, agentEnv, "next")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "plan.review", w.issue(t, 7).Stage)
	r = w.run(t, agentEnv, "next", "-i", "8")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "plan.review", w.issue(t, 8).Stage)
	assert.Equal(t, "plan.review", w.issue(t, 7).Stage)
}

// TestNextResolvesIssueFromUnbornBranch is the branch case of a fresh
// repository: `git init`, `git checkout -b issue-001-login`, no commit yet.
// The branch is named; agenttree must find issue 1 on it. (`git rev-parse
// --abbrev-ref HEAD` fails on an unborn branch and prints "HEAD"; the branch
// must be read in a way that works before the first commit.)
func TestNextResolvesIssueFromUnbornBranch(t *testing.T) {
	gittest.Require(t)
	for _, branch := range []string{"issue-001-login", "001-login"} {
		t.Run(branch, func(t *testing.T) {
			w := newWorkspace(t, testpipeline.Read(t, "cli"))
			w.create(t, "Add login page", "--stage", "plan.draft")
			gittest.Run(t, w.dir, "init", "-q", "-b", "main")
			gittest.Run(t, w.dir, "checkout", "-q", "-b", branch)
			r := w.run(t, agentEnv, "next", "--json")
			require.Equal(t, 0, r.code, "stdout %s stderr %s", r.stdout, r.stderr)
			assert.Equal(t, 1, decodeNext(t, r.stdout).Issue)
			assert.Equal(t, "plan.review", w.issue(t, 1).Stage)
		})
	}
}

func TestGraph(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want []string
		not  []string
	}{
		{
			name: "dot",
			args: []string{"graph", "--format", "dot"},
			want: []string{
				`digraph "default" {`,
				`"backlog" -> "plan.draft" [label="advance"];`,
				`"plan.draft" -> "plan.review" [label="advance"];`,
				`"plan.review" -> "implement.code" [label="approve"];`,
				`"implement.code" -> "implement.feedback" [label="advance"];`,
				`"implement.feedback" -> "implement.code" [label="step_back", style=dashed];`,
				`"implement.feedback" -> "security" [label="advance"];`,
				`"security" -> "implementation_review" [label="advance"];`,
				`"implementation_review" -> "accepted" [label="approve"];`,
				`"not_doing" [label=`,
			},
			not: []string{`-> "not_doing"`, `"accepted" ->`},
		},
		{
			name: "mermaid",
			args: []string{"graph", "--format", "mermaid"},
			want: []string{
				"flowchart LR",
				"backlog -->|advance| plan__draft",
				"plan__draft -->|advance| plan__review",
				"plan__review -->|approve| implement__code",
				"implement__code -->|advance| implement__feedback",
				"implement__feedback -.->|step_back| implement__code",
				"implement__feedback -->|advance| security",
				"security -->|advance| implementation_review",
				"implementation_review -->|approve| accepted",
			},
			not: []string{"--> not_doing", "|advance| backlog"},
		},
		{
			name: "mermaid is the default format",
			args: []string{"graph"},
			want: []string{"flowchart LR", "plan__review -->|approve| implement__code"},
		},
		{
			name: "another flow",
			args: []string{"graph", "--format", "dot", "--flow", "quick"},
			want: []string{
				`digraph "quick" {`,
				`"backlog" -> "implement.code" [label="advance"];`,
				`"implement.code" -> "accepted" [label="advance"];`,
			},
			not: []string{"plan.draft", "implement.feedback"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorkspace(t, testpipeline.Read(t, "cli"))
			r := w.run(t, humanEnv, tt.args...)
			require.Equal(t, 0, r.code, r.stderr)
			for _, s := range tt.want {
				assert.Contains(t, r.stdout, s)
			}
			for _, s := range tt.not {
				assert.NotContains(t, r.stdout, s)
			}
		})
	}

	w := newWorkspace(t, testpipeline.Read(t, "cli"))
	r := w.run(t, humanEnv, "graph", "--format", "png")
	assert.Equal(t, 2, r.code)
	assert.Contains(t, r.stderr, "--format mermaid")
	r = w.run(t, humanEnv, "graph", "--flow", "nope")
	assert.Equal(t, 2, r.code)
	assert.Contains(t, r.stderr, `no flow named "nope"`)
}

func TestBadUsageExitsTwo(t *testing.T) {
	tests := [][]string{
		{"frobnicate"},
		{"next", "--bogus"},
		{"next", "extra-arg"},
		{"approve"},
		{"issue", "create"},
		{"issue", "show", "1", "2"},
	}
	for _, args := range tests {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			w := newWorkspace(t, testpipeline.Read(t, "cli"))
			r := w.run(t, humanEnv, args...)
			assert.Equal(t, 2, r.code, "stdout %s stderr %s", r.stdout, r.stderr)
			assert.NotEmpty(t, r.stderr)
		})
	}
	r := invoke(t, map[string]string{"AGENTTREE_CONFIG": filepath.Join(t.TempDir(), "missing.yaml")}, "stages")
	assert.Equal(t, 2, r.code)
	assert.Contains(t, r.stderr, "missing.yaml")
}

// One unreadable issue.yaml does not hide the other issues.
func TestIssueListSurvivesACorruptIssue(t *testing.T) {
	w := newWorkspace(t, testpipeline.Read(t, "cli"))
	w.create(t, "Readable")
	broken := w.create(t, "Broken")
	require.NoError(t, os.WriteFile(filepath.Join(w.hostDir(broken), "issue.yaml"), []byte("id: [unclosed\n"), 0o644))
	r := w.run(t, humanEnv, "issue", "list")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "Readable")
	assert.Contains(t, r.stderr, "issue "+itoa(broken))
}
