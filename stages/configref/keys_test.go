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
)

// inForm keeps the keys a file of form f may have.
func inForm(ks []configref.Key, f stages.Form) []configref.Key {
	return slices.DeleteFunc(slices.Clone(ks), func(k configref.Key) bool { return k.Compat && f == stages.Canonical })
}

func names(ks []configref.Key) []string {
	out := make([]string, len(ks))
	for i, k := range ks {
		out[i] = k.Name
	}
	return out
}

// keysAt finds the keys the tables give the place where names, in the
// loader's spelling of places ("", "ci_polling", "roles.*").
func keysAt(t *testing.T, where string, f stages.Form) []string {
	t.Helper()
	ks := configref.TopLevel()
	if where != "" {
		name, _ := strings.CutSuffix(where, ".*")
		i := slices.IndexFunc(ks, func(k configref.Key) bool { return k.Name == name })
		require.GreaterOrEqual(t, i, 0, "the reference has no key %s", name)
		ks = ks[i].Keys
	}
	return names(inForm(ks, f))
}

// Every key the loader reads is in the reference.
func TestTablesHoldEveryKeyTheLoaderReads(t *testing.T) {
	for _, f := range []stages.Form{stages.Canonical, stages.Compatible} {
		t.Run(string(f), func(t *testing.T) {
			for where, keys := range load.TopLevelKeys(f) {
				assert.Subset(t, keysAt(t, where, f), keys, "keys of %q", where)
			}
			assert.Subset(t, names(inForm(configref.StageKeys(), f)), load.StageKeys(f))
		})
	}
	assert.ElementsMatch(t, names(configref.OnFailureKeys()), load.OnFailureKeys())
	var actions []stages.FailureAction
	for _, a := range configref.Actions() {
		actions = append(actions, a.Name)
	}
	assert.Equal(t, stages.FailureActions(), actions)
}

// sample is a value of k to load: its default or example, and for a
// mapping a value of each of its keys of form f.
func sample(k configref.Key, f stages.Form) any {
	switch k.Type {
	case configref.TypeSection, configref.TypeOnFailure:
		m := map[string]any{}
		for _, sub := range inForm(k.Keys, f) {
			m[sub.Name] = sample(sub, f)
		}
		return m
	case configref.TypeNames:
		entry := sample(configref.Key{Type: configref.TypeSection, Keys: k.Keys}, f)
		return map[string]any{"developer": entry}
	case configref.TypeSubstages:
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
		for _, k := range inForm(configref.TopLevel(), f) {
			if k.Type == configref.TypeStages {
				continue // every config here has stages
			}
			t.Run(string(f)+"/"+k.Name, func(t *testing.T) {
				loadClean(t, configWith(t, f, k.Name, sample(k, f), "", nil))
			})
		}
		for _, k := range inForm(configref.StageKeys(), f) {
			if k.Name == "name" {
				continue // every stage here has a name
			}
			t.Run(string(f)+"/stage/"+k.Name, func(t *testing.T) {
				loadClean(t, configWith(t, f, "", nil, k.Name, sample(k, f)))
			})
		}
	}
	for _, o := range configref.HookOptions() {
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
	for _, k := range configref.TopLevel() {
		for _, sub := range k.Keys {
			if sub.Default == "" {
				continue
			}
			without, with := base, base+k.Name+":\n  "
			if k.Type == configref.TypeNames {
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
