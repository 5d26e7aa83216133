package configref_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/hooks/builtin"
	"github.com/agenttree/agenttree/internal/exitcode"
	"github.com/agenttree/agenttree/stages"
	"github.com/agenttree/agenttree/stages/configref"
	"github.com/agenttree/agenttree/stages/load"
)

// The committed reference is what the code generates.
func TestCommittedReferenceIsCurrent(t *testing.T) {
	reg := builtin.Registry()
	schema, err := configref.JSONSchema(reg)
	require.NoError(t, err)
	for name, want := range map[string][]byte{
		configref.SchemaFile:   schema,
		configref.MarkdownFile: configref.Markdown(reg),
	} {
		got, err := os.ReadFile(filepath.Join("..", "..", "docs", name))
		require.NoError(t, err, "docs/%s is missing: run `go generate ./...`", name)
		assert.True(t, string(want) == string(got), "docs/%s is stale: run `go generate ./...`", name)
	}
}

// Every hook, and each of its names and parameters, is in the schema and
// in the reference.
func TestEveryHookIsDocumented(t *testing.T) {
	reg := builtin.Registry()
	data, err := configref.JSONSchema(reg)
	require.NoError(t, err)
	var schema struct {
		Defs map[string]struct {
			AnyOf []struct {
				Properties map[string]json.RawMessage `json:"properties"`
			} `json:"anyOf"`
		} `json:"$defs"`
	}
	require.NoError(t, json.Unmarshal(data, &schema))
	entry := schema.Defs["hookEntry"].AnyOf[1].Properties
	md := string(configref.Markdown(reg))
	names := reg.HookNames()
	for alias := range reg.Aliases() {
		names = append(names, alias)
	}
	for _, name := range names {
		spec, ok := reg.Hook(name)
		require.True(t, ok)
		assert.Contains(t, entry, name, "the schema's hook entries")
		assert.Contains(t, md, "`"+name+"`", "CONFIG.md")
		assert.Contains(t, md, "### `"+spec.Name+"`", "CONFIG.md has a section of hook %s", spec.Name)
		assert.NotEmpty(t, spec.Doc, "hook %s has a Doc", spec.Name)
		require.NotEmpty(t, spec.Example, "hook %s has an Example", spec.Name)
		for _, p := range spec.Params {
			assert.NotEmpty(t, p.Doc, "parameter %s of %s has a Doc", p.Name, spec.Name)
			assert.Contains(t, schema.Defs["hook."+spec.Name].AnyOf[len(schema.Defs["hook."+spec.Name].AnyOf)-1].Properties, p.Name)
		}
	}
}

// pipeline is a config whose controller stage runs entries (YAML of hook
// entries as their examples write them) as it starts.
func pipeline(entries ...string) string {
	config := "stages:\n  - name: implement\n    substages:\n      - name: code\n  - name: pr_ready\n    host: controller\n" +
		"    on_failure: {step_back_to: implement.code}\n    post_start:\n"
	for _, e := range entries {
		config += "      " + strings.ReplaceAll(e, "\n", "\n      ") + "\n"
	}
	return config
}

// Each hook's example is an entry the loader takes, and the schema too.
func TestHookExamplesLoad(t *testing.T) {
	reg := builtin.Registry()
	s := compile(t)
	for _, name := range reg.HookNames() {
		spec, _ := reg.Hook(name)
		t.Run(name, func(t *testing.T) {
			config := pipeline(spec.Example)
			_, err := load.Parse(stages.FileName, []byte(config), reg)
			assert.NoError(t, err, "%s", config)
			assert.NoError(t, s.Validate(asJSON(t, config)))
		})
	}
}

// Every variable a message may use is documented, and only those.
func TestPlaceholdersAreDocumented(t *testing.T) {
	reg := builtin.Registry()
	for _, ph := range configref.Placeholders(reg) {
		assert.NotEmpty(t, ph.Doc, "{{%s}} has a Doc", ph.Name)
		if ph.Source == configref.SourceController {
			continue
		}
		var entries []string
		for _, h := range ph.Hooks {
			spec, _ := reg.Hook(h)
			entries = append(entries, spec.Example)
		}
		config := pipeline(append(entries, `- send_message: "{{`+ph.Name+`}}"`)...)
		_, err := load.Parse(stages.FileName, []byte(config), reg)
		assert.NoError(t, err, "{{%s}} is one the loader knows", ph.Name)
	}
	_, err := load.Parse(stages.FileName, []byte(pipeline(`- send_message: "{{no_such_thing}}"`)), reg)
	assert.Error(t, err, "the loader refuses a placeholder nobody provides")
}

func TestExitCodesAreDocumented(t *testing.T) {
	md := string(configref.Markdown(builtin.Registry()))
	for _, c := range exitcode.All() {
		assert.Contains(t, md, "| `"+strconv.Itoa(int(c.Code))+"` | "+c.Doc)
	}
}
