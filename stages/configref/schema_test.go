package configref_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"github.com/agenttree/agenttree/hooks/builtin"
	"github.com/agenttree/agenttree/stages"
	"github.com/agenttree/agenttree/stages/configref"
	"github.com/agenttree/agenttree/stages/load"
)

// compile compiles the schema generated for the built-in hooks.
func compile(t *testing.T) *jsonschema.Schema {
	t.Helper()
	data, err := configref.JSONSchema(builtin.Registry())
	require.NoError(t, err)
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	require.NoError(t, err)
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	require.NoError(t, c.AddResource(configref.SchemaURL, doc))
	s, err := c.Compile(configref.SchemaURL)
	require.NoError(t, err)
	return s
}

// asJSON reads YAML as the JSON an editor's YAML plugin validates.
func asJSON(t *testing.T, text string) any {
	t.Helper()
	var v any
	require.NoError(t, yaml.Unmarshal([]byte(text), &v))
	data, err := json.Marshal(v)
	require.NoError(t, err)
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	require.NoError(t, err)
	return doc
}

func TestSchemaAcceptsExamples(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "examples", "*", stages.FileName))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	files = append(files, filepath.Join("..", "..", "stages", "load", "testdata", "python-style.yaml"),
		filepath.Join("..", "..", stages.FileName))
	s := compile(t)
	for _, f := range files {
		t.Run(f, func(t *testing.T) {
			data, err := os.ReadFile(f)
			require.NoError(t, err)
			assert.NoError(t, s.Validate(asJSON(t, string(data))))
		})
	}
}

func TestSchemaRejectsBrokenConfigs(t *testing.T) {
	s := compile(t)
	stage := func(hook string) string {
		return "stages:\n  - name: implement\n    pre_completion:\n      - " + hook + "\n  - name: done\n    terminal: completion\n"
	}
	tests := []struct {
		name, config string
	}{
		{"unknown hook", stage("file_exsits: review.md")},
		{"two hooks in one entry", stage("{has_commits: , title_set: }")},
		{"wrong parameter type", stage("min_words: {file: summary.md, min: many}")},
		{"bad enum value", stage("section_check: {file: review.md, section: Issues, expect: full}")},
		{"missing required parameter", stage("section_check: {file: review.md}")},
		{"missing main parameter", stage("file_exists:")},
		{"both of a one-of group", stage("contains: {file: r.md, text: a, values: [b]}")},
		{"unknown parameter", stage("file_exists: {file: r.md, path: x}")},
		{"bad on_failure action", stage("has_commits: {on_failure: retry}")},
		{"on_conflict beside a hook without conflicts", stage("has_commits:\n        on_conflict: escalate")},
		{"bad duration", stage("run: {command: make, timeout: soon}")},
		{"stage without name", "stages:\n  - human_review: true\n"},
		{"substage without name", "stages:\n  - name: implement\n    substages:\n      - role: reviewer\n"},
		{"unknown stage key", "stages:\n  - name: implement\n    colour: red\n"},
		{"unknown top-level key", "projekt: x\nstages:\n  - name: implement\n"},
		{"bad terminal", "stages:\n  - name: done\n    terminal: finished\n"},
		{"bad forge", "forge: gitlab\nstages:\n  - name: implement\n"},
		{"ci_polling not a mapping", "ci_polling: 30\nstages:\n  - name: implement\n"},
		{"earlier key in the list form", "stages:\n  - name: done\n    is_completion: true\n"},
		{"wrong type in the map form", "stages:\n  implement:\n    human_review: maybe\n"},
		{"wrong parameter type in the map form", "stages:\n  implement:\n    pre_completion:\n      - min_words: {file: s.md, min: many}\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := load.Parse(stages.FileName, []byte(tt.config), builtin.Registry())
			require.Error(t, err, "the loader refuses it")
			assert.Error(t, s.Validate(asJSON(t, tt.config)))
		})
	}
}

func TestSchemaAcceptsEveryEntryForm(t *testing.T) {
	s := compile(t)
	for _, hook := range []string{
		"has_commits",
		"has_commits:",
		"file_exists: review.md",
		"file_exists: {file: review.md}",
		"{file_exists: review.md, optional: true, context: docs}",
		"{has_commits: , timeout: 30, retries: 2, when: not hotfix}",
		"wait_for_ci: {timeout: 10m, on_failure: step_back}",
		"wait_for_ci: {on_failure: {step_back_to: implement}}",
		"wait_for_ci: {on_failure: [{send_message: 'CI failed: {{failed_checks}}'}, escalate]}",
		"check_conflicts: {on_conflict: [rebase, {step_back_to: implement}]}",
		"{check_conflicts: , on_conflict: [{escalate: }]}",
		"poll_pr_status: {on_ci_failure: escalate, on_conflict: {step_back_to: implement}}",
		"checkbox_checked: {file: r.md, checkbox: Approve, on_fail_substage: implement}",
		"ci_check:",
		"run: {command: make, timeout: 90s, must_pass: false, outputs: [coverage]}",
		"contains: {file: r.md, values: one}",
	} {
		t.Run(hook, func(t *testing.T) {
			config := "stages:\n  - name: implement\n  - name: pr_ready\n    host: controller\n" +
				"    on_failure: {step_back_to: implement}\n    pre_completion:\n      - " + hook + "\n"
			_, err := load.Parse(stages.FileName, []byte(config), builtin.Registry())
			require.NoError(t, err, "the loader takes it")
			assert.NoError(t, s.Validate(asJSON(t, config)))
		})
	}
}

// The schema refuses the numbers the loader refuses below a key's least
// value, and takes the least value itself: both come from the key's one
// declaration.
func TestSchemaBoundsAreTheLoaders(t *testing.T) {
	const base = "agents: {claude: {command: claude}}\nstages:\n  - name: implement\n"
	tests := []struct {
		name, setting string
		ok            bool
	}{
		{name: "concurrency of 1", setting: "controller: {concurrency: 1}", ok: true},
		{name: "concurrency of 0", setting: "controller: {concurrency: 0}"},
		{name: "tick of 1s", setting: "controller: {interval_s: 1}", ok: true},
		{name: "tick under 1s", setting: "controller: {interval_s: 0.5}"},
		{name: "no retries", setting: "ci_polling: {max_retries: 0}", ok: true},
		{name: "negative retries", setting: "ci_polling: {max_retries: -1}"},
		{name: "poll interval of 0", setting: "ci_polling: {poll_interval_s: 0}"},
		{name: "breaker threshold of 0", setting: "circuit_breaker: {same_error_threshold: 0}"},
		{name: "restarts of -1", setting: "roles: {developer: {agents: [claude], max_restarts: -1}}"},
	}
	s := compile(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text := base + tt.setting + "\n"
			_, loadErr := load.Parse("x/"+stages.FileName, []byte(text), builtin.Registry())
			schemaErr := s.Validate(asJSON(t, text))
			if tt.ok {
				assert.NoError(t, loadErr)
				assert.NoError(t, schemaErr)
				return
			}
			assert.Error(t, loadErr)
			assert.Error(t, schemaErr)
		})
	}
}
