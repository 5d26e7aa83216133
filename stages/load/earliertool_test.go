package load_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/stages"
	"github.com/agenttree/agenttree/stages/load"
)

// TestTheEarlierToolsOwnConfig loads the earlier tool's own repository
// config, as its repository holds it: what agenttree does differently is
// warned of one by one (a hook or setting it does not run, a skill file
// it does not find), and the keys that change nothing are one line.
func TestTheEarlierToolsOwnConfig(t *testing.T) {
	cfg, err := load.File("testdata/earlier-tool-repo.yaml", catalog())
	require.NoError(t, err)
	assert.Equal(t, stages.Compatible, cfg.Form)
	assert.Equal(t, stages.ForgeGitHub, cfg.Forge, "the file says no forge: the earlier tool's is GitHub")

	var got []string
	for _, w := range cfg.Warnings {
		require.Equal(t, stages.SevWarning, w.Severity)
		got = append(got, fmt.Sprintf("%d:%d %s", w.Pos.Line, w.Pos.Col, w.Msg))
	}
	notRun := "is not implemented by agenttree; it will be reported each time it would run, and never run"
	assert.Equal(t, []string{
		"6:1 19 keys the earlier tool read change nothing here: `default_model`, `port_range`, `commands`, tools' `startup_prompt` (3), " +
			"the `manager` role, roles' `description` (2), roles' `model` (2), stages' `color` (6), stages' `review_doc` (2)",
		"26:23 tools.claude.skip_permissions is not read",
		"44:7 roles.developer.container is not read",
		"51:7 roles.reviewer.container is not read",
		"54:12 roles.reviewer.skill is not read",
		"154:20 skill file implement/debug.md not found in _agenttree/skills/, where the earlier tool kept skills, nor beside the config file",
		"186:17 hook `wrapup_verified` " + notRun,
		"201:20 skill file independent_review.md not found in _agenttree/skills/, where the earlier tool kept skills, nor beside the config file",
		"218:20 skill file address_independent.md not found in _agenttree/skills/, where the earlier tool kept skills, nor beside the config file",
		"238:20 skill file ui_review.md not found in _agenttree/skills/, where the earlier tool kept skills, nor beside the config file",
		"267:16 skill file knowledge_base.md not found in _agenttree/skills/, where the earlier tool kept skills, nor beside the config file",
		"275:13 hook `cleanup_agent` " + notRun,
		"276:13 hook `start_blocked_issues` " + notRun,
		`292:3 flow "not_doing" has only parking-lot stages`,
		"299:1 manager_hooks is not read: agenttree runs none of the earlier tool's hooks outside its stages (post_sync: `cleanup_resources`)",
	}, got)

	assert.Equal(t, []string{"claude", "aider", "codex"}, cfg.AgentNames())
	for _, role := range []stages.Role{stages.RoleDeveloper, "reviewer"} {
		s, ok := cfg.Sessions(role)
		require.True(t, ok, role)
		assert.Equal(t, []string{"claude"}, s.Agents, role)
	}
	_, ok := cfg.Sessions("manager")
	assert.False(t, ok, "the manager is a person")
	n, ok := cfg.Node("implement.review")
	require.True(t, ok)
	assert.True(t, n.HumanReview())
	assert.Equal(t, stages.RoleHuman, n.Role())
}

// TestAToolWithoutAnEntryIsItsCommand checks the earlier tool's reading of
// a tool `tools:` does not declare: the command of that name.
func TestAToolWithoutAnEntryIsItsCommand(t *testing.T) {
	const flows = "flows:\n  default:\n    stages:\n      work: {}\n      review: {role: reviewer}\n      done: {is_completion: true}\n"
	tests := []struct {
		name     string
		yaml     string
		agents   map[string]string // name → command
		roles    map[stages.Role][]string
		warnings []string
		err      string
	}{
		{name: "a role's tool, no tools section",
			yaml:   "roles:\n  developer: {tool: claude}\n  reviewer: {tool: codex}\n" + flows,
			agents: map[string]string{"claude": "claude", "codex": "codex"},
			roles:  map[stages.Role][]string{stages.RoleDeveloper: {"claude"}, "reviewer": {"codex"}}},
		{name: "default_tool, no tools section",
			yaml:   "default_tool: claude\n" + flows,
			agents: map[string]string{"claude": "claude"},
			roles:  map[stages.Role][]string{stages.RoleDeveloper: {"claude"}}},
		{name: "beside declared tools",
			yaml:   "tools: {claude: {command: claude --model opus}}\nroles:\n  developer: {tool: claude}\n  reviewer: {tool: aider}\n" + flows,
			agents: map[string]string{"claude": "claude --model opus", "aider": "aider"},
			roles:  map[stages.Role][]string{stages.RoleDeveloper: {"claude"}, "reviewer": {"aider"}}},
		{name: "close to a declared tool: a likely typo, warned of",
			yaml:     "tools: {claude: {command: claude}}\ndefault_tool: cluade\n" + flows,
			agents:   map[string]string{"claude": "claude", "cluade": "cluade"},
			roles:    map[stages.Role][]string{stages.RoleDeveloper: {"cluade"}},
			warnings: []string{":2:15: warning: tool \"cluade\" has no entry in `tools:`; it runs as the command `cluade` (did you mean `claude`?)"}},
		{name: "the canonical agents key still names declared agents only",
			yaml: "roles:\n  developer: {agents: [claude]}\n" + flows,
			err:  `:2:24: error: role "developer" names unknown agent "claude"`},
		{name: "nor does the list form read tool",
			yaml: "roles:\n  developer: {tool: claude}\nstages:\n  - name: work\n",
			err:  "unknown key `tool` in roles.developer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := parseYAML(t, tt.yaml)
			if tt.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.err)
				return
			}
			require.NoError(t, err)
			containEach(t, diagStrings(cfg.Warnings), tt.warnings)
			got := map[string]string{}
			for _, a := range cfg.Agents {
				got[a.Name] = a.Command
			}
			assert.Equal(t, tt.agents, got)
			for role, agents := range tt.roles {
				s, ok := cfg.Sessions(role)
				require.True(t, ok, role)
				assert.Equal(t, agents, s.Agents, role)
			}
		})
	}
}

// TestKeysThatChangeNothingAreOneLine checks the earlier tool's keys that
// change nothing here are summed up in one warning, and those whose loss
// changes what happens are each warned of.
func TestKeysThatChangeNothingAreOneLine(t *testing.T) {
	const flows = "flows:\n  default:\n    stages:\n      work: {color: red}\n      done: {is_completion: true}\n"
	tests := []struct {
		name string
		yaml string
		want []string // every warning, in order
	}{
		{name: "one key",
			yaml: flows,
			want: []string{":4:14: warning: 1 key the earlier tool read changes nothing here: stages' `color` " +
				"(agenttree has no use for it: leave it while the earlier tool still reads this file, or delete it)"}},
		{name: "a substage's keys count too",
			yaml: "flows:\n  default:\n    stages:\n      work:\n        substages:\n          code: {review_doc: r.md, model: opus}\n      done: {is_completion: true}\n",
			want: []string{":6:18: warning: 2 keys the earlier tool read change nothing here: stages' `review_doc`, stages' `model`"}},
		{name: "a person's role without a tool",
			yaml: "roles:\n  manager: {description: me, process: agenttree run}\n" + flows,
			want: []string{":2:3: warning: 2 keys the earlier tool read change nothing here: the `manager` role, stages' `color`"}},
		{name: "a person's role with a tool is warned of: the tool is not started",
			yaml: "roles:\n  manager: {tool: claude}\n" + flows,
			want: []string{`:2:3: warning: role "manager" is not an agent's: its entry is ignored`, ":6:14: warning: 1 key"}},
		{name: "merge_strategy squash is merge_pr's default",
			yaml: "merge_strategy: squash\n" + flows,
			want: []string{":1:1: warning: 2 keys the earlier tool read change nothing here: `merge_strategy: squash`, stages' `color`"}},
		{name: "another merge_strategy is warned of",
			yaml: "merge_strategy: rebase\n" + flows,
			want: []string{":1:17: warning: merge_strategy \"rebase\" is not read: merge_pr squashes unless its `method` says otherwise (write it on the hook that merges: `merge_pr: {method: rebase}`)", ":5:14: warning: 1 key"}},
		{name: "hooks it ran after a merge are warned of",
			yaml: "hooks:\n  post_pr_create: []\n  post_merge:\n    - notify_slack: {channel: x}\n    - cleanup\n" + flows,
			want: []string{":1:1: warning: hooks is not read: agenttree runs none of the earlier tool's hooks outside its stages (post_merge: `notify_slack`, `cleanup`)", ":9:14: warning: 1 key"}},
		{name: "empty hook lists change nothing",
			yaml: "hooks: {post_merge: []}\nmanager_hooks:\n" + flows,
			want: []string{":1:1: warning: 3 keys the earlier tool read change nothing here: `hooks`, `manager_hooks`, stages' `color`"}},
		{name: "a key it did not read is still warned of alone",
			yaml: "colour_scheme: dark\n" + flows,
			want: []string{":1:1: warning: unknown key `colour_scheme` in the top level is ignored", ":5:14: warning: 1 key"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := parseYAML(t, tt.yaml)
			require.NoError(t, err)
			containEach(t, diagStrings(cfg.Warnings), tt.want)
		})
	}

	t.Run("the list form refuses them", func(t *testing.T) {
		_, err := parseYAML(t, "stages:\n  - name: work\n    color: red\n")
		require.Error(t, err)
		assert.Contains(t, err.Error(), ":3:5: error: unknown key `color` in stage work")
	})
}

// TestTheMapFormsForgeIsGitHub checks a file of the earlier tool that
// says no `forge:` gets GitHub, the only forge that tool had: the local
// forge would refuse the merge in a repository whose origin is GitHub.
// What a file says is kept, and the list form's default stays local.
func TestTheMapFormsForgeIsGitHub(t *testing.T) {
	const mapFlows = "flows:\n  default:\n    stages:\n      work: {}\n      done: {is_completion: true}\n"
	const listStages = "stages:\n  - name: work\n  - name: done\n    terminal: completion\n"
	tests := []struct {
		name string
		yaml string
		want stages.ForgeKind
	}{
		{"map form, no forge", mapFlows, stages.ForgeGitHub},
		{"map form, forge: local", "forge: local\nci: {command: make test}\n" + mapFlows, stages.ForgeLocal},
		{"map form, forge: github", "forge: github\n" + mapFlows, stages.ForgeGitHub},
		{"list form, no forge", listStages, stages.ForgeLocal},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := parseYAML(t, tt.yaml)
			require.NoError(t, err)
			assert.Equal(t, tt.want, cfg.Forge)
			for _, w := range cfg.Warnings {
				assert.NotContains(t, w.Msg, "forge: local")
			}
		})
	}
}

// TestTheMapFormsSkillsAreWhereTheEarlierToolKeptThem checks a relative
// `skill:` of the map form is found where the earlier tool read it,
// _agenttree/skills/ beside the config file, and else beside the config
// file; the stage keeps the path the engine reads. The list form reads
// the path as written only.
func TestTheMapFormsSkillsAreWhereTheEarlierToolKeptThem(t *testing.T) {
	const mapForm = "flows:\n  default:\n    stages:\n      work:\n        substages:\n          debug: {skill: implement/debug.md}\n      done: {is_completion: true}\n"
	const listForm = "stages:\n  - name: work\n    substages:\n      - name: debug\n        skill: implement/debug.md\n  - name: done\n    terminal: completion\n"
	tests := []struct {
		name  string
		yaml  string
		files []string // made beside the config file
		skill string   // the path the stage keeps
		warn  string
	}{
		{name: "in _agenttree/skills",
			yaml: mapForm, files: []string{"_agenttree/skills/implement/debug.md"},
			skill: filepath.Join("_agenttree", "skills", "implement", "debug.md")},
		{name: "in both: the earlier tool's place wins",
			yaml: mapForm, files: []string{"_agenttree/skills/implement/debug.md", "implement/debug.md"},
			skill: filepath.Join("_agenttree", "skills", "implement", "debug.md")},
		{name: "beside the config file",
			yaml: mapForm, files: []string{"implement/debug.md"},
			skill: "implement/debug.md"},
		{name: "in neither: the warning names both",
			yaml:  mapForm,
			skill: "implement/debug.md",
			warn: ":6:26: warning: skill file implement/debug.md not found in _agenttree/skills/, where the earlier tool kept skills, nor beside the config file " +
				"(create _agenttree/skills/implement/debug.md, or fix the path)"},
		{name: "the list form does not look in _agenttree/skills",
			yaml: listForm, files: []string{"_agenttree/skills/implement/debug.md"},
			skill: "implement/debug.md",
			warn:  ":5:16: warning: skill file implement/debug.md not found (create it, or fix the path (relative to the config file))"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, f := range tt.files {
				p := filepath.Join(dir, f)
				require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
				require.NoError(t, os.WriteFile(p, []byte("Debug it.\n"), 0o644))
			}
			file := filepath.Join(dir, ".agenttree.yaml")
			require.NoError(t, os.WriteFile(file, []byte(tt.yaml), 0o644))
			cfg, err := load.File(file, catalog())
			require.NoError(t, err)
			want := []string{}
			if tt.warn != "" {
				want = []string{file + tt.warn}
			}
			assert.Equal(t, want, diagStrings(cfg.Warnings))
			n, ok := cfg.Node("work.debug")
			require.True(t, ok)
			assert.Equal(t, tt.skill, n.Skill())
			if tt.warn == "" {
				assert.FileExists(t, filepath.Join(dir, n.Skill()), "the engine reads the skill from the config file's directory")
			}
		})
	}
}

// TestTheMapFormsUnendingFlows checks validate's warning of a map-form
// pipeline with no end: it names the stage `next` leaves an issue at (a
// redirect_only stage after it is not), and gives the fix in the map
// form's spelling, `is_completion: true`, on the earlier tool's last
// parking lot where its issues ended.
func TestTheMapFormsUnendingFlows(t *testing.T) {
	const never = "has no terminal stage, nor has any stage of the pipeline: an issue on it is never done, and stays at "
	tests := []struct {
		name string
		yaml string
		want []string
	}{
		{name: "the earlier tool's accepted, before a redirect_only not_doing",
			yaml: "flows:\n  default:\n    stages:\n      backlog: {is_parking_lot: true}\n      implement: {}\n" +
				"      accepted: {is_parking_lot: true, role: manager}\n      not_doing: {is_parking_lot: true, redirect_only: true}\n" +
				"  quick: [backlog, implement, accepted]\n",
			want: []string{
				`:2:3: warning: flow "default" ` + never + "accepted for good (if issues are done there, give accepted `is_completion: true`)",
				`:8:3: warning: flow "quick" ` + never + "accepted for good (if issues are done there, give accepted `is_completion: true`)",
			}},
		{name: "a flow that ends at a stage where work happens",
			yaml: "flows:\n  default:\n    stages:\n      backlog: {is_parking_lot: true}\n      implement: {}\n      fix: {redirect_only: true}\n",
			want: []string{`:2:3: warning: flow "default" ` + never + "implement for good " +
				"(add the stage issues end in, last in the flow's stages (and in each other flow's list): `accepted: {is_completion: true}`)"}},
		{name: "the fix given ends each flow",
			yaml: "flows:\n  default:\n    stages:\n      backlog: {is_parking_lot: true}\n      implement: {}\n" +
				"      accepted: {is_parking_lot: true, is_completion: true, role: manager}\n      not_doing: {is_parking_lot: true, redirect_only: true}\n" +
				"  quick: [backlog, implement, accepted]\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := parseYAML(t, tt.yaml)
			require.NoError(t, err)
			want := []string{}
			for _, w := range tt.want {
				want = append(want, "/repo/.agenttree.yaml"+w)
			}
			assert.Equal(t, want, diagStrings(load.Unending(cfg)))
		})
	}

	t.Run("the earlier tool's own config", func(t *testing.T) {
		cfg, err := load.File("testdata/earlier-tool-repo.yaml", catalog())
		require.NoError(t, err)
		var got []string
		for _, d := range load.Unending(cfg) {
			got = append(got, fmt.Sprintf("%d:%d %s (%s)", d.Pos.Line, d.Pos.Col, d.Msg, d.Hint))
		}
		assert.Equal(t, []string{
			`61:3 flow "default" ` + never + "accepted for good (if issues are done there, give accepted `is_completion: true`)",
			`284:3 flow "quick" ` + never + "accepted for good (if issues are done there, give accepted `is_completion: true`)",
		}, got)
	})
}
