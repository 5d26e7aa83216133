package shell

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/hooks"
	"github.com/agenttree/agenttree/hooks/hookstest"
)

// TestPlaceholders runs real shells on placeholders wherever they can
// stand in a command: each is the variable's value as one word, or the
// command is refused, saying where and why, before anything runs.
func TestPlaceholders(t *testing.T) {
	tests := []struct {
		name    string
		command string
		want    string // the output; "" when refused
		err     string
	}{
		{"no placeholders", `printf '[%s]' "$AGENTTREE_ISSUE" '{x}'`, "[7][{x}]", ""},
		{"bare", `printf '[%s]' {{issue_id}} {{ t }}`, "[7][it's  two]", ""},
		{"empty value stays one word", `printf '[%s]' {{empty}} end`, "[][end]", ""},
		{"unknown is empty", `printf '[%s]' {{nope}}`, "[]", ""},
		{"in double quotes", `printf '[%s]' "id {{t}}."`, "[id it's  two.]", ""},
		{"after a closed double quote", `printf '[%s]' "a"{{t}}"b"`, "[ait's  twob]", ""},
		{"single quotes inside double quotes", `printf '[%s]' "'{{t}}'"`, "['it's  two']", ""},
		{"between closed single quotes", `printf '[%s]' 'a '{{t}}' b'`, "[a it's  two b]", ""},
		{"in $() inside double quotes", `printf '[%s]' "$(printf %s {{t}})"`, "[it's  two]", ""},
		{"in $() with nested parens", `printf '[%s]' "$(f() (printf %s {{t}}); f)"`, "[it's  two]", ""},
		{"after $() closed, back in double quotes", `printf '[%s]' "$(echo x) {{t}}"`, "[x it's  two]", ""},
		{"inside backticks in double quotes", "printf '[%s]' \"`printf %s {{t}}`\"", "[it's  two]", ""},
		{"escaped double quote does not close", `printf '[%s]' "a\" {{t}}"`, `[a" it's  two]`, ""},
		{"escaped backslash before", `printf '[%s]' "x\\{{t}}"`, `[x\it's  two]`, ""},
		{"escaped dollar before", `printf '[%s]' \${{t}}`, `[$it's  two]`, ""},
		{"comment", "echo ok # {{t}}\n", "ok", ""},
		{"comment with a quote", "echo ok # it's {{t}}", "ok", ""},
		{"# inside a word is not a comment", `printf '[%s]' a#{{t}}`, "[a#it's  two]", ""},
		{"after ${...} closed", `printf '[%s]' "${AGENTTREE_ISSUE}/{{issue_id}}"`, "[7/7]", ""},
		{"inside ${...}", `printf '[%s]' ${NOT_SET:-{{t}}}`, "[it's  two]", ""},
		{"inside ${...} in double quotes", `printf '[%s]' "${NOT_SET:-{{t}}}"`, "[it's  two]", ""},
		{"assigned", `v={{t}}; printf '[%s]' "$v"`, "[it's  two]", ""},
		{"here-document", "cat <<EOF\n[{{t}}]\nEOF", "[it's  two]", ""},
		{"argument of a script given to sh -c", `sh -c 'printf "[%s]" "$1"' sh {{t}}`, "[it's  two]", ""},
		{"text that looks like a marker", `printf '[%s]' 'AgentTreePlaceholder0_' {{t}}`, "[AgentTreePlaceholder0_][it's  two]", ""},

		{"in single quotes", `printf '[%s]' '{{t}}'`, "", "{{t}} at 1:16 stands inside single quotes"},
		{"amid single quotes", `echo 'Title: {{t}} done'`, "", "inside single quotes the shell expands nothing"},
		{"at the end of single quotes", `git commit -m 'Fix {{t}}'`, "", "inside single quotes the shell expands nothing"},
		{"in $'...'", `printf '[%s]' $'a {{t}}'`, "", "stands inside single quotes"},
		{"in single quotes in $()", `printf '[%s]' "$(printf %s '{{t}}')"`, "", "stands inside single quotes"},
		{"here-document with a quoted delimiter", "cat <<'EOF'\n{{t}}\nEOF", "", "{{t}} at 2:1 stands in a here-document whose delimiter is quoted"},
		{"here-document with a double-quoted delimiter", "cat <<\"EOF\"\n{{t}}\nEOF", "", "whose delimiter is quoted"},
		{"here-document with an escaped delimiter", "cat <<-\\EOF\n\t{{t}}\n\tEOF", "", "whose delimiter is quoted"},
		{"backslash before", `printf '[%s]' x\{{t}}`, "", "{{t}} at 1:17 follows a backslash"},
		{"backslash before, in double quotes", `printf '[%s]' "x\{{t}}"`, "", "follows a backslash"},
		{"after $", `printf '[%s]' ${{t}}`, "", "follows a `$`"},
		{"after $, in double quotes", `printf '[%s]' "${{t}}"`, "", "follows a `$`"},
		{"variable name", `{{t}}=1 true`, "", "stands in a variable, function or loop name"},
		{"loop variable", `for {{t}} in a; do :; done`, "", "stands in a variable, function or loop name"},
		{"function name", `{{t}}() { :; }`, "", "stands in a variable, function or loop name"},
		{"local name (bash)", `f() { local {{t}}=1; }`, "", "stands in a variable, function or loop name"},
		{"arithmetic", `echo $(( {{n}} + 1 ))`, "", "{{n}} at 1:10 stands in arithmetic"},
		{"command substitution in arithmetic", `echo $(( $(echo "{{n}}") + 1 ))`, "", "stands in arithmetic"},
		{"arithmetic command (bash)", `(( {{n}} > 1 )) && echo big`, "", "stands in arithmetic"},
		{"$[ ] (bash)", `echo $[{{n}} + 1]`, "", "stands in arithmetic"},
		{"let (bash)", `let x={{n}}`, "", "stands in arithmetic"},
		{"array subscript (bash)", `a[{{n}}]=1`, "", "stands in arithmetic"},
		{"[[ ]] (bash)", `[[ {{n}} -eq 1 ]] && echo one`, "", "{{n}} at 1:4 stands in [[ ]]"},
		{"eval", `eval "echo {{t}}"`, "", "is part of a script that eval, trap or sh -c parses again"},
		{"trap", `trap "echo {{t}}" EXIT`, "", "parses again"},
		{"sh -c", `sh -c "echo {{t}}"`, "", "parses again"},
		{"bash -ec behind timeout", `timeout 5 /bin/bash -ec "echo {{t}}"`, "", "parses again"},
		{"every bad placeholder is reported", `echo '{{t}}' $(( {{n}} ))`, "", "(\"a {{t}} b\")\n{{n}} at 1:18 stands in arithmetic"},
		{"placeholders differing in case", `printf '[%s]' {{t}} {{T}}`, "", "{{t}} and {{T}} would both be $AGENTTREE_VAR_T"},

		{"does not parse", `printf '[%s]' {{t}} "oops`, "", `cannot parse the command as sh at 1:21: reached EOF without closing quote ` + "`\"`"},
		{"does not parse, on line 2", "echo {{t}}\necho {{t}} 'oops", "", "cannot parse the command as sh at 2:12:"},
		{"here-document delimiter", "cat <<{{t}}\nx\n{{t}}", "", "cannot parse the command as sh at 1:5: unclosed here-document `{{t}}`"},
		{"bash-only syntax", `a=(1 2); echo {{t}}`, "", "cannot parse the command as sh at 1:3: arrays are a bash/mksh/zsh feature"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			issue := hookstest.NewIssue(t)
			issue.WorkDir = issue.Dir
			issue.Outputs = map[string]string{"t": "it's  two", "empty": "", "n": "1"}
			o := hookstest.Call(t, registry(), "run", issue, hooks.Params{"command": tt.command}, nil)
			if tt.err != "" {
				require.Equal(t, hooks.KindFail, o.Kind)
				assert.Contains(t, o.Reason, tt.err)
				assert.Empty(t, o.Outputs["exit_status"], "nothing ran")
				return
			}
			require.Equal(t, hooks.KindPass, o.Kind, o.Reason)
			assert.Equal(t, tt.want, o.Outputs["output_tail"])
		})
	}
}

// TestRunPlaceholdersCannotInject runs real shells on titles written to
// break out of their quoting. `rm` and `id` are shadowed by a script that
// only leaves a mark, so a broken quoting shows as a mark, not as a
// deleted disk. Every command either prints the title as it is or is
// refused before it runs.
func TestRunPlaceholdersCannotInject(t *testing.T) {
	bin := t.TempDir()
	mark := filepath.Join(t.TempDir(), "injected")
	script := "#!/bin/sh\necho \"$@\" >> '" + mark + "'\n"
	require.NoError(t, os.WriteFile(filepath.Join(bin, "rm"), []byte(script), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(bin, "id"), []byte(script), 0o755))
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))

	titles := []string{
		`'; rm -rf /; echo '`,
		`$(id)`,
		"`id`",
		`"; rm -rf / #`,
		`a\'b\"c\\d ${HOME} $((1+1))`,
		"two\nlines; rm -rf /",
		`${AGENTTREE_ISSUE_TITLE+$(id)}`,
		`a${IFS}b;rm${IFS}-rf${IFS}/`,
		`a[$(id)]`,
		"EOF\nid\nEOF",
	}
	commands := []struct {
		name    string
		command string
		refused string // what the refusal says; "" when the command runs
		trim    bool   // a command substitution drops trailing newlines
	}{
		{name: "bare", command: `printf '%s' {{issue_title}}`},
		{name: "double quotes", command: `printf '%s' "{{issue_title}}"`},
		{name: "command substitution", command: `printf '%s' "$(printf '%s' {{issue_title}})"`, trim: true},
		{name: "backticks", command: "printf '%s' \"`printf '%s' {{issue_title}}`\"", trim: true},
		{name: "here-document", command: "cat <<EOF\n{{issue_title}}\nEOF", trim: true},
		{name: "parameter default", command: `printf '%s' "${NOT_SET:-{{issue_title}}}"`},
		{name: "assigned", command: `t={{issue_title}}; printf '%s' "$t"`},
		{name: "case", command: `case {{issue_title}} in *) printf '%s' {{issue_title}};; esac`},
		{name: "argument of sh -c", command: `sh -c 'printf "%s" "$1"' sh {{issue_title}}`},
		{name: "single quotes", command: `printf '%s' '{{issue_title}}'`, refused: "single quote"},
		{name: "single quotes in a command substitution", command: `printf '%s' "$(printf '%s' '{{issue_title}}')"`, refused: "single quote"},
		{name: "quoted here-document", command: "cat <<'EOF'\n{{issue_title}}\nEOF", refused: "delimiter is quoted"},
		{name: "arithmetic", command: `echo $(( {{issue_title}} ))`, refused: "arithmetic"},
		{name: "[[ ]]", command: `[[ {{issue_title}} -eq 1 ]]`, refused: "[[ ]]"},
		{name: "eval", command: `eval "printf '%s' {{issue_title}}"`, refused: "parses again"},
		{name: "sh -c", command: `sh -c "printf '%s' {{issue_title}}"`, refused: "parses again"},
	}
	for _, title := range titles {
		for _, c := range commands {
			t.Run(c.name+"/"+title, func(t *testing.T) {
				issue := hookstest.NewIssue(t)
				issue.Title = title
				issue.WorkDir = issue.Dir
				o := hookstest.Call(t, registry(), "run", issue, hooks.Params{"command": c.command}, nil)
				assert.NoFileExists(t, mark)
				if c.refused != "" {
					require.Equal(t, hooks.KindFail, o.Kind)
					assert.Contains(t, o.Reason, c.refused)
					assert.Empty(t, o.Outputs["exit_status"], "nothing ran")
					return
				}
				require.Equal(t, hooks.KindPass, o.Kind, o.Reason)
				want := title
				if c.trim {
					want = strings.TrimRight(title, "\n")
				}
				assert.Equal(t, want, o.Outputs["output_tail"])
			})
		}
	}
}

func TestRunMustPass(t *testing.T) {
	tests := []struct {
		name     string
		params   hooks.Params
		kind     hooks.Kind
		warnings []string
		reason   string
	}{
		{"default: a failure blocks", hooks.Params{"command": "echo no; exit 3"}, hooks.KindFail, nil, `command "echo no; exit 3" failed (exit 3, general)`},
		{"must_pass: true blocks", hooks.Params{"command": "exit 3", "must_pass": true}, hooks.KindFail, nil, "failed (exit 3"},
		{"must_pass: false warns", hooks.Params{"command": "echo no; exit 3", "must_pass": false}, hooks.KindPass,
			[]string{"run (must_pass: false) failed: command \"echo no; exit 3\" failed (exit 3, general):\nno"}, ""},
		{"must_pass: false on success", hooks.Params{"command": "true", "must_pass": false}, hooks.KindPass, nil, ""},
		{"the reason shows the command as written", hooks.Params{"command": "echo {{issue_id}}; exit 1"}, hooks.KindFail, nil,
			`command "echo {{issue_id}}; exit 1" failed (exit 1, general):` + "\n7"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			issue := hookstest.NewIssue(t)
			issue.WorkDir = issue.Dir
			o := hookstest.Call(t, registry(), "run", issue, tt.params, nil)
			assert.Equal(t, tt.kind, o.Kind, o.Reason)
			assert.Equal(t, tt.warnings, o.Warnings)
			assert.Contains(t, o.Reason, tt.reason)
			assert.NotEmpty(t, o.Outputs["exit_status"])
		})
	}
}

func TestRunLoadsEarlierSpelling(t *testing.T) {
	tests := []struct {
		name string
		hook string
		err  string
	}{
		{"must_pass and timeout", `run: {command: "make test ISSUE={{issue_id}}", must_pass: false, timeout: 900}`, ""},
		{"unknown placeholder", `run: {command: "make {{isue_id}}"}`, "run.command uses {{isue_id}}"},
		{"must_pass must be a bool", `run: {command: make, must_pass: maybe}`, "parameter `must_pass`: expected true or false"},
		{"placeholder in single quotes", `run: "echo 'Title: {{issue_title}}'"`,
			":6:13: error: hook `run` parameter `command`: {{issue_title}} at 1:14 stands inside single quotes"},
		{"placeholder in arithmetic", `run: {command: "echo $(( {{issue_id}} + 1 ))", timeout: 60}`,
			":6:13: error: hook `run` parameter `command`: {{issue_id}} at 1:10 stands in arithmetic"},
		{"command that does not parse", `run: "echo {{issue_id}} \"oops"`,
			":6:13: error: hook `run` parameter `command`: cannot parse the command as sh at 1:19: reached EOF without closing quote"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			entry, _, err := hookstest.LoadEntry(registry(), "pre_completion", tt.hook)
			if tt.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, false, entry.Params["must_pass"])
			assert.Equal(t, "make test ISSUE={{issue_id}}", entry.Params["command"])
		})
	}
}
