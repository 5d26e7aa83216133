package load_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/stages"
	"github.com/agenttree/agenttree/stages/load"
)

func TestPythonStyleConfigLoads(t *testing.T) {
	cfg, err := load.File("testdata/python-style.yaml", catalog())
	require.NoError(t, err)
	assert.Equal(t, stages.Compatible, cfg.Form)
	assert.True(t, cfg.AllowSelfApprove)
	assert.Equal(t, "trunk", cfg.DefaultBranch)
	assert.Equal(t, stages.ForgeGitHub, cfg.Forge, "no forge: in the map form is the earlier tool's GitHub")

	var got []string
	for _, w := range cfg.Warnings {
		require.Equal(t, stages.SevWarning, w.Severity)
		got = append(got, fmt.Sprintf("%d:%d %s", w.Pos.Line, w.Pos.Col, w.Msg))
	}
	notRun := "is not implemented by agenttree; it will be reported each time it would run, and never run"
	assert.Equal(t, []string{
		"8:1 7 keys the earlier tool read change nothing here: `port_range`, `commands`, roles' `description`, stages' `color` (3), stages' `review_doc`",
		"13:23 tools.claude.skip_permissions is not read",
		"23:16 roles.reviewer.container is not read",
		"30:1 manager_hooks is not read: agenttree runs none of the earlier tool's hooks outside its stages (post_sync: `cleanup_agent`, `check_stalled`)",
		"69:17 unknown option `host_only` beside hook `run` is ignored",
		"72:93 flow `hotfix` includes implement.review, whose on_fail sends issues to implement.fix, which flow `hotfix` does not include; add it to the flow",
		"75:17 hook `wrapup_verified` " + notRun,
		"97:13 failures of `pr_ci_passed` in pr_ready lead nowhere: add `on_failure: {step_back_to: STAGE}` to the stage or an `on_failure` to the hook",
		"98:13 unknown option `run_every_n_syncs` beside hook `ci_check` is ignored",
		"99:13 hook `cleanup_agent` " + notRun,
		"100:13 unknown option `min_interval_s` beside hook `cleanup_agent` is ignored",
		`114:3 flow "not_doing" has only parking-lot stages`,
	}, got)

	assert.Equal(t, []string{"default", "hotfix", "not_doing"}, cfg.FlowNames())
	assert.Equal(t, "default", cfg.DefaultFlow)
	flows := map[string][]string{
		"default": {"backlog", "triage", "explore.research", "explore.plan", "spec", "implement.setup", "implement.code",
			"implement.review", "implement.fix", "ui_review", "independent_review.read", "independent_review.address_independent",
			"pr_ready", "accepted", "not_doing"},
		"hotfix":    {"backlog", "implement.code", "implement.review", "accepted"},
		"not_doing": {"not_doing"},
	}
	for name, paths := range flows {
		f, err := cfg.Flow(name)
		require.NoError(t, err)
		assert.Equal(t, paths, f.Paths(), name)
	}

	type hookFacts struct {
		node, list  string
		index       int
		name        string
		params      map[string]any
		unsupported bool
	}
	hookAt := func(path, list string, i int) *stages.HookEntry {
		n, ok := cfg.Node(path)
		require.True(t, ok, path)
		var hs []*stages.HookEntry
		switch list {
		case "pre":
			_, hs = n.Leaving(n)
		case "start":
			hs = n.Entering(n)
		case "post":
			hs = n.Completed(n)
		}
		require.Greater(t, len(hs), i, "%s %s", path, list)
		return hs[i]
	}
	for _, tt := range []hookFacts{
		{node: "explore.research", list: "start", name: "create_file", params: map[string]any{"template": "research.md", "dest": "research.md"}},
		{node: "spec", list: "pre", name: "checkbox_checked", params: map[string]any{"file": "spec.md", "item": "Approve"}},
		{node: "implement.setup", list: "start", name: "run",
			params: map[string]any{"command": "git switch -c lf-{{issue_id}} || git switch lf-{{issue_id}}", "must_pass": false}},
		{node: "implement.code", list: "pre", index: 1, name: "run",
			params: map[string]any{"command": "make check", "must_pass": true, "timeout": 900 * time.Second}},
		{node: "implement.review", list: "pre", name: "section_check",
			params: map[string]any{"file": "review.md", "section": "Blocking", "expect": "empty", "on_fail": "implement.fix"}},
		{node: "implement.review", list: "pre", index: 1, name: "field_check",
			params: map[string]any{"file": "review.md", "field": "scores.average", "min": 7.0}},
		{node: "implement.review", list: "pre", index: 2, name: "contains",
			params: map[string]any{"file": "review.md", "values": []string{"Verdict", "Reviewed-by"}}},
		{node: "implement.review", list: "pre", index: 3, name: "wrapup_verified", params: map[string]any{}, unsupported: true},
		{node: "implement.fix", list: "post", name: "rollback", params: map[string]any{"to": "implement.review", "max_rollbacks": 4}},
		{node: "independent_review.read", list: "pre", name: "checkbox_checked",
			params: map[string]any{"file": "second_opinion.md", "item": "Approve", "on_fail": "independent_review.address_independent"}},
		{node: "independent_review.address_independent", list: "post", name: "rollback", params: map[string]any{"to": "independent_review.read"}},
		{node: "pr_ready", list: "start", name: "pr_ci_passed", params: map[string]any{}},
		{node: "pr_ready", list: "start", index: 1, name: "cleanup_agent", params: map[string]any{}, unsupported: true},
	} {
		h := hookAt(tt.node, tt.list, tt.index)
		assert.Equal(t, tt.name, h.Name, "%s %s %d", tt.node, tt.list, tt.index)
		assert.Equal(t, tt.params, h.Params, "%s %s", tt.node, tt.name)
		assert.Equal(t, tt.unsupported, h.Unsupported, "%s %s", tt.node, tt.name)
	}

	nodes := []struct {
		path                     string
		role                     stages.Role
		parking, redirect, human bool
		terminal                 stages.Terminal
		vars                     map[string]any
		condition                bool
	}{
		{path: "backlog", role: stages.RoleDeveloper, parking: true, condition: true},
		{path: "triage", role: stages.RoleDeveloper, condition: true},
		{path: "spec", role: stages.RoleHuman, human: true, condition: true},
		{path: "implement.fix", role: stages.RoleDeveloper, redirect: true, condition: true},
		{path: "ui_review", role: stages.RoleDeveloper, human: true, vars: map[string]any{"needs_ui_review": true}, condition: true},
		{path: "ui_review", role: stages.RoleDeveloper, human: true, condition: false},
		{path: "independent_review.read", role: "reviewer", vars: map[string]any{"wants_second_opinion": true}, condition: true},
		{path: "independent_review.read", role: "reviewer", vars: map[string]any{"wants_second_opinion": true, "hotfix": true}, condition: false},
		{path: "pr_ready", role: stages.RoleController, condition: true},
		{path: "accepted", role: stages.RoleDeveloper, terminal: stages.TerminalCompletion, condition: true},
		{path: "not_doing", role: stages.RoleDeveloper, parking: true, redirect: true, condition: true},
	}
	for _, tt := range nodes {
		n, ok := cfg.Node(tt.path)
		require.True(t, ok, tt.path)
		assert.Equal(t, tt.role, n.Role(), tt.path)
		assert.Equal(t, tt.parking, n.ParkingLot(), tt.path)
		assert.Equal(t, tt.redirect, n.RedirectOnly(), tt.path)
		assert.Equal(t, tt.human, n.HumanReview(), tt.path)
		assert.Equal(t, tt.terminal, n.Terminal(), tt.path)
		holds := true
		if c := n.Condition(); c != nil {
			holds, err = c.Eval(tt.vars)
			require.NoError(t, err)
		}
		assert.Equal(t, tt.condition, holds, "%s with %v", tt.path, tt.vars)
	}
}

// TestHookOptionsOfTheEarlierTool checks keys beside a hook that name no
// option: ignored with a warning in the compatible form, an error naming
// the known options in the canonical one.
func TestHookOptionsOfTheEarlierTool(t *testing.T) {
	compat := func(entry string) string {
		return "flows:\n  default:\n    stages:\n      a:\n        pre_completion:\n          - " + entry + "\n      b:\n"
	}
	canon := func(entry string) string {
		return "stages:\n  - name: a\n    pre_completion:\n      - " + entry + "\n  - name: b\n"
	}
	tests := []struct {
		name     string
		yaml     string
		errors   []string
		warnings []string
	}{
		{name: "compatible: extra keys are ignored",
			yaml:     compat("run: {command: make test}\n            host_only: true\n            min_interval_s: 30\n            optional: true"),
			warnings: []string{"7:13: warning: unknown option `host_only` beside hook `run` is ignored", "unknown option `min_interval_s` beside hook `run` is ignored"}},
		{name: "compatible: unknown hook with an extra key",
			yaml:     compat("cleanup_agent:\n            run_every_n_syncs: 5"),
			warnings: []string{"hook `cleanup_agent` is not implemented", "unknown option `run_every_n_syncs` beside hook `cleanup_agent` is ignored"}},
		{name: "compatible: two known hooks are still an error",
			yaml:   compat("has_commits:\n            title_set:"),
			errors: []string{"a hook entry must name exactly one hook, found 2 (`has_commits`, `title_set`)"}},
		{name: "canonical: unknown option",
			yaml:   canon("run: make test\n        colour: red"),
			errors: []string{":5:9: error: unknown option `colour` beside hook `run` (known options: optional, timeout, retries, when, context, on_failure)"}},
		{name: "canonical: misspelt option",
			yaml:   canon("run: make test\n        optinal: true"),
			errors: []string{"unknown option `optinal` beside hook `run` (known options: optional, timeout, retries, when, context, on_failure) (did you mean `optional`?)"}},
		{name: "canonical: no known hook",
			yaml:   canon("file_exist: x.md\n        colour: red"),
			errors: []string{"a hook entry must name exactly one hook, found 2 (`file_exist`, `colour`)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := parseYAML(t, tt.yaml)
			if len(tt.errors) > 0 {
				require.Error(t, err)
				containEach(t, errorStrings(t, err), tt.errors)
				return
			}
			require.NoError(t, err)
			containEach(t, diagStrings(cfg.Warnings), tt.warnings)
		})
	}
}

func TestDuplicateKeys(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want []string // every error, in order
	}{
		{name: "two pre_completion lists",
			yaml: "stages:\n  - name: a\n    pre_completion:\n      - has_commits:\n    pre_completion:\n      - title_set:\n",
			want: []string{"/repo/.agenttree.yaml:5:5: error: duplicate key `pre_completion` (the first is at /repo/.agenttree.yaml:3:5)"}},
		{name: "two stages lists",
			yaml: "stages:\n  - name: a\nproject: x\nstages:\n  - name: b\n",
			want: []string{":4:1: error: duplicate key `stages` (the first is at /repo/.agenttree.yaml:1:1)"}},
		{name: "inside hook parameters",
			yaml: "stages:\n  - name: a\n    pre_completion:\n      - section_check: {file: r.md, section: A, section: B}\n",
			want: []string{":4:49: error: duplicate key `section` (the first is at /repo/.agenttree.yaml:4:37)"}},
		{name: "compatible form too, three times",
			yaml: "flows:\n  default:\n    stages:\n      a:\n        is_parking_lot: true\n        is_parking_lot: false\n        is_parking_lot: true\n      b:\n",
			want: []string{":6:9: error: duplicate key `is_parking_lot` (the first is at /repo/.agenttree.yaml:5:9)",
				":7:9: error: duplicate key `is_parking_lot` (the first is at /repo/.agenttree.yaml:5:9)"}},
		{name: "in ignored keys too",
			yaml: "stages:\n  - name: a\nflows:\n  q: [a]\n  q: [a]\n",
			want: []string{":5:3: error: duplicate key `q`", `duplicate flow "q"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseYAML(t, tt.yaml)
			require.Error(t, err)
			containEach(t, errorStrings(t, err), tt.want)
		})
	}

	t.Run("the same key in different mappings is fine", func(t *testing.T) {
		_, err := parseYAML(t, "stages:\n  - name: a\n    output: x.md\n  - name: b\n    output: x.md\n")
		require.NoError(t, err)
	})
}

// TestRedirectTargetsStayInTheFlow checks every place a stage can send an
// issue to is in each flow that includes the stage.
func TestRedirectTargetsStayInTheFlow(t *testing.T) {
	const stagesList = `stages:
  - name: implement
    substages:
      - name: code
      - name: review
        %s
      - name: fix
        redirect_only: true
  - name: accepted
    terminal: completion
flows:
  quick: [implement.code, implement.review, accepted]
`
	tests := []struct {
		name string
		keys string // YAML of the review substage (indented 8)
		want string // "" when it loads
	}{
		{"section_check on_fail",
			"pre_completion:\n          - section_check: {file: r.md, section: X, on_fail: fix}",
			":7:62: error: flow `quick` includes implement.review, whose on_fail sends issues to implement.fix, which flow `quick` does not include; add it to the flow"},
		{"checkbox_checked on_fail",
			"pre_completion:\n          - checkbox_checked: {file: r.md, item: ok, on_fail_substage: fix}",
			"whose on_fail sends issues to implement.fix, which flow `quick` does not include"},
		{"rollback",
			"post_completion:\n          - rollback: {to: fix}",
			"flow `quick` includes implement.review, whose rollback sends issues to implement.fix"},
		{"step_back",
			"pre_completion:\n          - step_back: implement.fix",
			"whose step_back sends issues to implement.fix"},
		{"stage on_failure",
			"on_failure: {step_back_to: fix}",
			"whose on_failure sends issues to implement.fix"},
		{"per-hook on_failure",
			"pre_completion:\n          - file_exists: r.md\n            on_failure: {step_back_to: fix}",
			"whose `file_exists` on_failure sends issues to implement.fix"},
		{"target inside the flow", "pre_completion:\n          - section_check: {file: r.md, section: X, on_fail: code}", ""},
		{"no target", "pre_completion:\n          - file_exists: r.md", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseYAML(t, fmt.Sprintf(stagesList, tt.keys))
			if tt.want == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			ds := diagnostics(t, err)
			require.Len(t, ds, 1, err.Error())
			assert.Contains(t, ds[0].String(), tt.want)
		})
	}

	t.Run("a stage's own hooks count for each of its substages", func(t *testing.T) {
		_, err := parseYAML(t, `stages:
  - name: implement
    on_failure: {step_back_to: implement.fix}
    substages:
      - name: code
      - name: fix
  - name: done
flows:
  quick: [implement.code, done]
`)
		require.Error(t, err)
		assert.Contains(t, err.Error(), ":3:32: error: flow `quick` includes implement.code, whose on_failure sends issues to implement.fix")
	})

	t.Run("compatible form: a warning", func(t *testing.T) {
		cfg, err := parseYAML(t, `flows:
  default:
    stages:
      code:
        pre_completion:
          - section_check: {file: r.md, section: X, on_fail: fix}
      fix:
        redirect_only: true
      done:
        is_completion: true
  quick:
    stages: [code, done]
`)
		require.NoError(t, err)
		require.Len(t, cfg.Warnings, 1)
		assert.Equal(t, "/repo/.agenttree.yaml:6:62: warning: flow `quick` includes code, whose on_fail sends issues to fix, which flow `quick` does not include; add it to the flow",
			cfg.Warnings[0].String())
	})
}

func TestParkingLotOnlyFlow(t *testing.T) {
	t.Run("compatible: a warning", func(t *testing.T) {
		cfg, err := parseYAML(t, `flows:
  default:
    stages:
      backlog: {is_parking_lot: true}
      work:
      not_doing: {is_parking_lot: true, redirect_only: true}
  not_doing:
    stages: [not_doing]
`)
		require.NoError(t, err)
		require.Len(t, cfg.Warnings, 1)
		assert.Contains(t, cfg.Warnings[0].String(), `:7:3: warning: flow "not_doing" has only parking-lot stages`)
	})
	t.Run("canonical: an error", func(t *testing.T) {
		_, err := parseYAML(t, "stages:\n  - name: work\n  - name: not_doing\n    parking_lot: true\nflows:\n  not_doing: [not_doing]\n")
		require.Error(t, err)
		assert.Contains(t, err.Error(), `:6:3: error: flow "not_doing" has only parking-lot stages`)
	})
}

func TestBadParameterValueIsOneError(t *testing.T) {
	tests := []struct {
		name string
		hook string
		want string
	}{
		{"bad int", `min_words: {file: x.md, min: "ten"}`, "hook `min_words` parameter `min`: expected a whole number"},
		{"bad main parameter", `file_exists: [a, b]`, "hook `file_exists` parameter `file`: expected a string, got a list"},
		{"bad value of one alternative", `contains: {file: x.md, values: {a: b}}`, "hook `contains` parameter `values`: expected a list of strings"},
		{"alias given twice", `checkbox_checked: {file: x.md, item: a, checkbox: b}`, "hook `checkbox_checked` parameter `item` is given twice (`checkbox` is another spelling of it)"},
		{"alternative missing", `contains: {file: x.md}`, "hook `contains` needs `text` or `values` (add one of them)"},
		{"alternatives both", `contains: {file: x.md, text: a, values: [b]}`, "hook `contains` takes `text` or `values`, not both"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseYAML(t, "stages:\n  - name: a\n    pre_completion:\n      - "+tt.hook+"\n")
			ds := diagnostics(t, err)
			require.Len(t, ds, 1, err.Error())
			assert.Contains(t, ds[0].String(), tt.want)
		})
	}
}

// TestEarlierToolKeys checks the earlier tool's spellings of stage keys:
// true means the canonical key, false means nothing, and anything else is
// an error where the value is.
func TestEarlierToolKeys(t *testing.T) {
	tests := []struct {
		name     string
		keys     string // YAML of stage a (indented 8)
		parking  bool
		terminal stages.Terminal
		err      string
	}{
		{name: "parking lot", keys: "is_parking_lot: true", parking: true},
		{name: "not a parking lot", keys: "is_parking_lot: false"},
		{name: "completion", keys: "is_completion: true", terminal: stages.TerminalCompletion},
		{name: "abandon", keys: "is_abandon: true", terminal: stages.TerminalAbandon},
		{name: "false leaves the canonical key alone", keys: "terminal: abandon\n        is_completion: false", terminal: stages.TerminalAbandon},
		{name: "the later key wins", keys: "is_abandon: true\n        is_completion: true", terminal: stages.TerminalCompletion},
		{name: "not a boolean", keys: "is_completion: maybe", err: `:5:24: error: expected true or false, got "maybe"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := parseYAML(t, "flows:\n  default:\n    stages:\n      a:\n        "+tt.keys+"\n      b:\n")
			if tt.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.err)
				return
			}
			require.NoError(t, err)
			require.Empty(t, cfg.Warnings)
			n, ok := cfg.Node("a")
			require.True(t, ok)
			assert.Equal(t, tt.parking, n.ParkingLot())
			assert.Equal(t, tt.terminal, n.Terminal())
		})
	}
}
