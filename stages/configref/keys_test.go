package configref_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"github.com/agenttree/agenttree/hooks/builtin"
	"github.com/agenttree/agenttree/stages"
	"github.com/agenttree/agenttree/stages/configref"
	"github.com/agenttree/agenttree/stages/load"
	"github.com/agenttree/agenttree/stages/settings"
)

// inForm keeps the keys a file of form f may have.
func inForm(ks []settings.Key, f stages.Form) []settings.Key {
	return slices.DeleteFunc(slices.Clone(ks), func(k settings.Key) bool { return k.Compat && f == stages.Canonical })
}

func names(ks []settings.Key) []string {
	out := make([]string, len(ks))
	for i, k := range ks {
		out[i] = k.Name
	}
	return out
}

// Every key the readers of stages and hook entries read is in the
// reference. (The top level's keys need no such check: the loader reads
// them by the same declaration the reference is written from.)
func TestTablesHoldEveryKeyTheLoaderReads(t *testing.T) {
	for _, f := range []stages.Form{stages.Canonical, stages.Compatible} {
		t.Run(string(f), func(t *testing.T) {
			assert.Subset(t, names(inForm(settings.StageKeys(), f)), load.StageKeys(f))
		})
	}
	assert.ElementsMatch(t, names(settings.OnFailureKeys()), load.OnFailureKeys())
	var actions []stages.FailureAction
	for _, a := range settings.Actions() {
		actions = append(actions, a.Name)
	}
	assert.Equal(t, stages.FailureActions(), actions)
}

// sample is a value of k to load: its default or example, and for a
// mapping a value of each of its keys of form f.
func sample(k settings.Key, f stages.Form) any {
	switch k.Type {
	case settings.TypeSection, settings.TypeOnFailure:
		m := map[string]any{}
		for _, sub := range inForm(k.Keys, f) {
			m[sub.Name] = sample(sub, f)
		}
		return m
	case settings.TypeNames:
		entry := sample(settings.Key{Type: settings.TypeSection, Keys: k.Keys}, f)
		return map[string]any{"developer": entry}
	case settings.TypeSubstages:
		return []any{map[string]any{"name": "one"}}
	}
	var v any
	if err := yaml.Unmarshal([]byte(k.Value()), &v); err != nil {
		panic(fmt.Sprintf("key %s: value %q: %v", k.Name, k.Value(), err))
	}
	return v
}

// configWith is a pipeline of form f with the top-level key set to v,
// the stage `review` carrying the stage key sk set to sv.
func configWith(t *testing.T, f stages.Form, key string, v any, sk string, sv any) []byte {
	t.Helper()
	review := map[string]any{}
	if sk != "" {
		review[sk] = sv
	}
	top := map[string]any{"agents": map[string]any{"claude": map[string]any{"command": "claude"}}}
	if f == stages.Canonical {
		review["name"] = "review"
		top["stages"] = []any{map[string]any{"name": "backlog"}, map[string]any{"name": "implement"}, review, map[string]any{"name": "accepted"}}
	} else {
		top["stages"] = map[string]any{"backlog": nil, "implement": nil, "review": review, "accepted": nil}
	}
	if key != "" {
		top[key] = v
	}
	data, err := yaml.Marshal(top)
	require.NoError(t, err)
	return data
}

// loadClean loads config and fails on an error or on any warning of a key
// the loader does not know.
func loadClean(t *testing.T, config []byte) *stages.Config {
	t.Helper()
	// The repository's own config path, so that skill files are found.
	cfg, err := load.Parse("../../"+stages.FileName, config, builtin.Registry())
	require.NoError(t, err, "%s", config)
	for _, w := range cfg.Warnings {
		assert.NotContains(t, w.Msg, "unknown", "%s", config)
	}
	return cfg
}

// Every key of the reference is one the loader reads.
func TestLoaderReadsEveryKeyOfTheTables(t *testing.T) {
	for _, f := range []stages.Form{stages.Canonical, stages.Compatible} {
		for _, k := range inForm(settings.TopLevel(), f) {
			if k.Type == settings.TypeStages {
				continue // every config here has stages
			}
			t.Run(string(f)+"/"+k.Name, func(t *testing.T) {
				v := sample(k, f)
				if k.Name == "state" {
					// Every key under state is read with the state in
					// etcd; over files, state.nodes is refused.
					v.(map[string]any)["backend"] = "etcd"
				}
				loadClean(t, configWith(t, f, k.Name, v, "", nil))
			})
		}
		for _, k := range inForm(settings.StageKeys(), f) {
			if k.Name == "name" {
				continue // every stage here has a name
			}
			t.Run(string(f)+"/stage/"+k.Name, func(t *testing.T) {
				loadClean(t, configWith(t, f, "", nil, k.Name, sample(k, f)))
			})
		}
	}
	for _, o := range settings.HookOptions() {
		t.Run("hook/"+o.Name, func(t *testing.T) {
			entry := map[string]any{"poll_pr_status": nil, o.Name: sample(o.Key, stages.Canonical)}
			loadClean(t, configWith(t, stages.Canonical, "", nil, "pre_completion", []any{entry}))
		})
	}
}

// A key's documented default is what leaving it out gives: setting it to
// its default loads the same config.
func TestDefaultsAreTheLoaders(t *testing.T) {
	const base = "agents: {claude: {command: claude}}\nstages:\n  - name: implement\n"
	for _, k := range settings.TopLevel() {
		for _, sub := range k.Keys {
			if sub.Default == "" {
				continue
			}
			without, with := base, base+k.Name+":\n  "
			if k.Type == settings.TypeNames {
				without = base + k.Name + ":\n  developer:\n    agents: [claude]\n"
				with = without + "    "
			}
			t.Run(k.Name+"."+sub.Name, func(t *testing.T) {
				want := loadClean(t, []byte(without))
				got := loadClean(t, []byte(with+sub.Name+": "+sub.Default+"\n"))
				assert.Equal(t, want, got)
			})
		}
		if k.Default != "" {
			t.Run(k.Name, func(t *testing.T) {
				assert.Equal(t, loadClean(t, []byte(base)), loadClean(t, []byte(base+k.Name+": "+k.Default+"\n")))
			})
		}
	}
}

// The reference names each key of the earlier tool that the map form
// drops as changing nothing.
func TestReferenceNamesTheEarlierToolsInertKeys(t *testing.T) {
	md := string(configref.Markdown(builtin.Registry()))
	start := strings.Index(md, "## The earlier tool's spellings")
	require.GreaterOrEqual(t, start, 0)
	section := md[start:]
	section = section[:strings.Index(section, "| Key |")]
	for where, keys := range load.InertKeys() {
		for _, k := range keys {
			assert.Contains(t, section, "`"+k+"`", "key %s of %q", k, where)
		}
	}
}
