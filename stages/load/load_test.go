package load_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/stages"
	"github.com/agenttree/agenttree/stages/load"
)

func parseYAML(t *testing.T, text string) (*stages.Config, error) {
	t.Helper()
	return load.Parse("/repo/.agenttree.yaml", []byte(text), catalog())
}

func diagnostics(t *testing.T, err error) []stages.Diagnostic {
	t.Helper()
	var le *stages.LoadError
	require.ErrorAs(t, err, &le)
	return le.Diagnostics
}

// diagStrings renders diagnostics the way `validate` prints them.
func diagStrings(ds []stages.Diagnostic) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.String()
	}
	return out
}

// errorStrings renders the errors of a failed load, without its warnings.
func errorStrings(t *testing.T, err error) []string {
	t.Helper()
	var out []string
	for _, d := range diagnostics(t, err) {
		if d.Severity == stages.SevError {
			out = append(out, d.String())
		}
	}
	return out
}

// containEach checks that got has one line per want, in order, each
// containing its want.
func containEach(t *testing.T, got, want []string) {
	t.Helper()
	require.Len(t, got, len(want), strings.Join(got, "\n"))
	for i, w := range want {
		assert.Contains(t, got[i], w)
	}
}

type nodeFacts struct {
	Path                                 string
	Role                                 stages.Role
	Human, Controller, Parking, Redirect bool
	Terminal                             stages.Terminal
	Cond                                 string
	Gates                                []string
}

func facts(f *stages.Flow) []nodeFacts {
	var out []nodeFacts
	for _, n := range f.Nodes {
		nf := nodeFacts{Path: n.Path, Role: n.Role(), Human: n.HumanReview(), Controller: n.Controller(),
			Parking: n.ParkingLot(), Redirect: n.RedirectOnly(), Terminal: n.Terminal()}
		if c := n.Condition(); c != nil {
			ok, _ := c.Eval(map[string]any{"needs_ui_review": true})
			nf.Cond = map[bool]string{true: "true-when-set", false: "false-when-set"}[ok]
		}
		_, hooks := n.Leaving(nil)
		for _, h := range hooks {
			nf.Gates = append(nf.Gates, h.Name+":"+h.Params["file"].(string))
			if t, ok := h.Params["on_fail"]; ok {
				nf.Gates = append(nf.Gates, "on_fail:"+t.(string))
			}
		}
		out = append(out, nf)
	}
	return out
}

func TestBothSpellingsGiveTheSamePipeline(t *testing.T) {
	canon, err := load.File("testdata/canonical.yaml", catalog())
	require.NoError(t, err)
	compat, err := load.File("testdata/compatible.yaml", catalog())
	require.NoError(t, err)

	assert.Equal(t, stages.Canonical, canon.Form)
	assert.Equal(t, stages.Compatible, compat.Form)
	assert.Empty(t, compat.Warnings)
	assert.Equal(t, canon.DefaultFlow, compat.DefaultFlow)
	require.ElementsMatch(t, canon.FlowNames(), compat.FlowNames())
	for _, name := range canon.FlowNames() {
		cf, err := canon.Flow(name)
		require.NoError(t, err)
		pf, err := compat.Flow(name)
		require.NoError(t, err)
		assert.Equal(t, cf.Paths(), pf.Paths(), "flow %s", name)
		assert.Equal(t, facts(cf), facts(pf), "flow %s", name)
	}
	def, _ := canon.Flow("")
	assert.Equal(t, []string{"backlog", "define", "implement.code", "implement.feedback", "ui_review", "accepted", "not_doing"}, def.Paths())
}

func TestValidationErrors(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want []string // substrings of the diagnostics, each must appear
	}{
		{"yaml syntax", "stages:\n  - name: a\n   bad: [\n", []string{".agenttree.yaml:", "error:"}},
		{"empty", "", []string{"the config is empty"}},
		{"unknown top key", "stagez: []\nstages: [{name: a}]\n", []string{":1:1: error: unknown key `stagez`", "did you mean `stages`?"}},
		{"unknown stage key", "stages:\n  - name: a\n    human_reveiw: true\n", []string{":3:5: error: unknown key `human_reveiw` in stage a", "did you mean `human_review`?"}},
		{"compat key in canonical", "stages:\n  - name: a\n    is_parking_lot: true\n  - name: b\n", []string{"unknown key `is_parking_lot`", "parking_lot: true"}},
		{"duplicate stage", "stages:\n  - name: a\n  - name: a\n", []string{":3:5: error: duplicate stage \"a\"", "the first is at /repo/.agenttree.yaml:2:5"}},
		{"duplicate substage", "stages:\n  - name: a\n    substages:\n      - name: x\n      - name: x\n", []string{"duplicate substage \"x\" in stage \"a\""}},
		{"flow references unknown stage", "stages:\n  - name: implement\nflows:\n  quick: [implemnt]\n", []string{":4:11: error: flow \"quick\" references unknown stage \"implemnt\"", "did you mean `implement`?"}},
		{"unknown substage in flow", "stages:\n  - name: a\n    substages: [x, y]\nflows:\n  q: [a.z]\n", []string{"references unknown stage \"a.z\""}},
		{"step_back_to target", "stages:\n  - name: a\n    on_failure: {step_back_to: nowhere}\n", []string{"on_failure.step_back_to names unknown stage \"nowhere\""}},
		{"on_fail target", "stages:\n  - name: a\n    pre_completion:\n      - section_check: {file: r.md, section: X, on_fail: revew}\n  - name: review\n", []string{":4:58: error: section_check.on_fail names unknown stage \"revew\"", "did you mean `review`?"}},
		{"rollback target", "stages:\n  - name: a\n    post_completion:\n      - rollback: {to: b, max_rollbacks: 2}\n", []string{"rollback.to names unknown stage \"b\""}},
		{"unknown hook", "stages:\n  - name: a\n    pre_completion:\n      - file_exist: x.md\n", []string{":4:9: error: unknown hook `file_exist`", "did you mean `file_exists`?"}},
		{"unknown hook param", "stages:\n  - name: a\n    pre_completion:\n      - section_check: {file: r.md, section: X, expct: empty}\n", []string{"hook `section_check` has no parameter `expct`", "did you mean `expect`?"}},
		{"bad param type", "stages:\n  - name: a\n    pre_completion:\n      - has_list_items: {file: r.md, min: lots}\n", []string{"parameter `min`: expected a whole number"}},
		{"bad enum", "stages:\n  - name: a\n    pre_completion:\n      - section_check: {file: r.md, section: X, expect: emtpy}\n", []string{"must be one of empty, not_empty, all_checked", "did you mean `empty`?"}},
		{"missing required param", "stages:\n  - name: a\n    pre_completion:\n      - section_check: {file: r.md}\n", []string{"hook `section_check` needs parameter `section`"}},
		{"bad condition", "stages:\n  - name: a\n  - name: b\n    condition: \"needs ui review ((\"\n", []string{":4:23: error: cannot parse condition"}},
		{"bad plain condition", "stages:\n  - name: a\n  - name: b\n    condition: hotfix ===\n", []string{":4:25: error: cannot parse condition"}},
		{"bad when", "stages:\n  - name: a\n    pre_completion:\n      - file_exists: x.md\n        when: \"a ==\"\n", []string{"cannot parse condition"}},
		{"unknown placeholder", "stages:\n  - name: a\n    on_failure: {step_back_to: a, message: \"CI failed: {{failure_resaon}}\"}\n", []string{"uses {{failure_resaon}}, which no hook or issue provides", "did you mean `failure_reason`?"}},
		{"run placeholder in single quotes", "stages:\n  - name: a\n    pre_completion:\n      - run: \"echo 'Title: {{issue_title}}'\"\n",
			[]string{":4:9: error: hook `run` parameter `command`: {{issue_title}} at 1:14 stands inside single quotes"}},
		{"run placeholder in arithmetic", "stages:\n  - name: a\n    pre_completion:\n      - run:\n          command: |\n            n=1\n            echo $((n + {{issue_id}}))\n",
			[]string{":4:9: error: hook `run` parameter `command`: {{issue_id}} at 2:13 stands in arithmetic"}},
		{"run command that does not parse", "stages:\n  - name: a\n    pre_completion:\n      - run: \"echo {{issue_id}} 'oops\"\n",
			[]string{":4:9: error: hook `run` parameter `command`: cannot parse the command as sh at 1:19: reached EOF without closing quote `'`"}},
		{"only parking lots", "stages:\n  - name: backlog\n    parking_lot: true\n", []string{"flow \"default\" has only parking-lot stages"}},
		{"two hooks in one entry", "stages:\n  - name: a\n    pre_completion:\n      - file_exists: x.md\n        has_commits:\n", []string{"must name exactly one hook, found 2"}},
		{"bad terminal", "stages:\n  - name: a\n    terminal: done\n", []string{"unknown terminal kind \"done\""}},
		{"unknown on_failure action", "stages:\n  - name: a\n    pre_completion:\n      - file_exists: x.md\n        on_failure: escalte\n", []string{"unknown on_failure action \"escalte\"", "did you mean `escalate`?"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := parseYAML(t, tt.yaml)
			require.Error(t, err)
			assert.Nil(t, cfg)
			msg := err.Error()
			for _, w := range tt.want {
				assert.Contains(t, msg, w)
			}
		})
	}
}

// Messages may use the variables every issue provides (the hook
// catalog's), the ones the engine and the host controller add, and the
// outputs of the config's hooks: nothing else.
func TestMessageVariables(t *testing.T) {
	tests := []struct {
		name    string
		hook    string // a post_start hook beside the message
		vars    string
		unknown string
	}{
		{"the issue's own", "", "{{issue_id}} {{issue_title}} {{stage}} {{flow}} {{branch}} {{labels}} {{pr_number}} {{pr_url}} {{head_sha}}", ""},
		{"the engine's and the controller's", "", "{{failure_reason}} {{attempt}} {{max_retries}}", ""},
		{"a hook's outputs", "wait_for_ci", "{{failed_checks}} {{ci_url}}", ""},
		{"an output of no hook in the config", "", "{{failed_checks}}", "failed_checks"},
		{"from_stage, which nothing provides", "", "{{from_stage}}", "from_stage"},
		{"to_stage, which nothing provides", "", "{{to_stage}}", "to_stage"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hook := "[]"
			if tt.hook != "" {
				hook = "[" + tt.hook + "]"
			}
			_, err := parseYAML(t, "stages:\n  - name: a\n    post_start: "+hook+"\n    on_failure: {step_back_to: a, message: \""+tt.vars+"\"}\n")
			if tt.unknown == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), "on_failure.message uses {{"+tt.unknown+"}}, which no hook or issue provides")
		})
	}
}

// Each problem a hook's own Check finds is a diagnostic of its own, at
// the entry.
func TestHookCheckReportsEachProblem(t *testing.T) {
	_, err := parseYAML(t, "stages:\n  - name: a\n    pre_completion:\n      - run: \"echo '{{issue_title}}' $(( {{issue_id}} ))\"\n")
	var got []string
	for _, d := range diagnostics(t, err) {
		got = append(got, fmt.Sprintf("%d:%d %s", d.Pos.Line, d.Pos.Col, d.Msg))
	}
	require.Len(t, got, 2, strings.Join(got, "\n"))
	assert.Contains(t, got[0], "4:9 hook `run` parameter `command`: {{issue_title}} at 1:7 stands inside single quotes")
	assert.Contains(t, got[1], "4:9 hook `run` parameter `command`: {{issue_id}} at 1:28 stands in arithmetic")
}

func TestEveryErrorIsReported(t *testing.T) {
	_, err := parseYAML(t, `
stages:
  - name: a
    human_reveiw: true
    pre_completion:
      - file_exist: x.md
  - name: a
flows:
  q: [zzz]
`)
	ds := diagnostics(t, err)
	var lines []string
	for _, d := range ds {
		lines = append(lines, d.String())
	}
	all := strings.Join(lines, "\n")
	assert.Len(t, ds, 4, all)
	for _, w := range []string{"human_reveiw", "file_exist", "duplicate stage", "zzz"} {
		assert.Contains(t, all, w)
	}
}

func TestCompatibleFormWarnsInsteadOfFailing(t *testing.T) {
	cfg, err := parseYAML(t, `
flows:
  default:
    stages:
      implement:
        review_notes: review.md
        pre_completion:
          - ci_wait_forever: {minutes: 3}
      done:
        is_completion: true
tools: {claude: {command: claude}}
tolls: {}
`)
	require.NoError(t, err)
	var all []string
	for _, w := range cfg.Warnings {
		all = append(all, w.String())
	}
	joined := strings.Join(all, "\n")
	assert.Contains(t, joined, "unknown key `review_notes` in stage implement is ignored")
	assert.Contains(t, joined, "hook `ci_wait_forever` is not implemented by agenttree")
	assert.Contains(t, joined, "unknown key `tolls` in the top level is ignored")
	n, ok := cfg.Node("implement")
	require.True(t, ok)
	_, gates := n.Leaving(nil)
	require.Len(t, gates, 1)
	assert.True(t, gates[0].Unsupported)
}

func TestHookEntrySpellings(t *testing.T) {
	cfg, err := parseYAML(t, `
stages:
  - name: a
    pre_completion:
      - has_commits
      - has_commits:
      - file_exists: review.md
      - section_check: {file: review.md, section: Tests, expect: not_empty, optional: true}
      - run: {command: "make test", timeout: 90}
        retries: 2
        context: unit tests
        when: "not skip_tests"
  - name: b
`)
	require.NoError(t, err)
	n, _ := cfg.Node("a")
	_, gates := n.Leaving(nil)
	require.Len(t, gates, 5)
	assert.Equal(t, "review.md", gates[2].Params["file"])
	assert.True(t, gates[3].Optional)
	assert.Equal(t, "make test", gates[4].Params["command"])
	assert.Equal(t, 2, gates[4].Retries)
	assert.Equal(t, "unit tests", gates[4].Label())
	require.NotNil(t, gates[4].When)
}

func TestForgeKind(t *testing.T) {
	tests := []struct {
		name string
		line string
		want stages.ForgeKind
		err  string
	}{
		{"default", "", stages.ForgeLocal, ""},
		{"github", "forge: github\n", stages.ForgeGitHub, ""},
		{"local", "forge: local\n", stages.ForgeLocal, ""},
		{"unknown", "forge: gitlab\n", "", `:1:8: error: unknown forge "gitlab" (use ` + "`github` or `local`)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := parseYAML(t, tt.line+"stages: [{name: a}]\n")
			if tt.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, cfg.Forge)
		})
	}
}

// TestFlowNamedThreeTimes checks each later flow of a name is reported
// once, beside the duplicate key.
func TestFlowNamedThreeTimes(t *testing.T) {
	_, err := parseYAML(t, "stages:\n  - name: a\nflows:\n  q: [a]\n  q: [a]\n  q: [a]\n")
	var got []string
	for _, d := range diagnostics(t, err) {
		got = append(got, fmt.Sprintf("%d:%d %s", d.Pos.Line, d.Pos.Col, d.Msg))
	}
	assert.Equal(t, []string{
		"5:3 duplicate key `q` (the first is at /repo/.agenttree.yaml:4:3)",
		`5:3 duplicate flow "q"`,
		"6:3 duplicate key `q` (the first is at /repo/.agenttree.yaml:4:3)",
		`6:3 duplicate flow "q"`,
	}, got)
}

// What agents are told is the repository's, like its rules: a skill file
// outside it is refused.
func TestSkillOutsideTheRepositoryIsRefused(t *testing.T) {
	for _, skill := range []string{"/etc/motd", "../elsewhere/skill.md"} {
		_, err := parseYAML(t, "stages:\n  - name: a\n    skill: "+skill+"\n  - name: done\n    terminal: completion\n")
		require.Error(t, err, skill)
		assert.Contains(t, err.Error(), "is outside the repository")
		assert.Contains(t, err.Error(), ".agenttree.yaml:3:12")
	}
}
