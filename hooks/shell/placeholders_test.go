package shell

import (
	"cmp"
	"os"
	"os/exec"
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
		{"eval", `eval "echo {{t}}"`, "", "is part of a script that the shell parses again"},
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

// TestPlaceholdersNeverRunAsCode builds each command with Script() for an
// issue whose title runs `touch MARK` wherever a shell reads it as code or
// as a name (a[$(touch MARK)]), and runs it with dash, and with bash, as
// sh: each command either runs without leaving MARK or is refused, saying
// where and why.
func TestPlaceholdersNeverRunAsCode(t *testing.T) {
	const title = `a[$(touch MARK)]`
	tests := []struct {
		name    string
		command string
		bash    bool   // bash only: dash does not have what the command uses
		title   string // the issue's title when not title
		refused string // where and why; "" when the command runs
		want    string // the output of a command that runs
	}{
		// A shell given no -c and no script file reads its script from its standard input.
		{name: "here-document to sh", command: "sh <<EOF\necho {{issue_title}}\nEOF", refused: "{{issue_title}} at 2:6 is part of a script that the shell parses again"},
		{name: "here-document to . /dev/stdin", command: ". /dev/stdin <<EOF\necho {{issue_title}}\nEOF", refused: "at 2:6 is part of a script"},
		{name: "here-document to source /dev/fd/0", command: "source /dev/fd/0 <<EOF\necho {{issue_title}}\nEOF", bash: true, refused: "at 2:6 is part of a script"},
		{name: "here-document to sh -s", command: "sh -s x <<EOF\necho {{issue_title}}\nEOF", refused: "at 2:6 is part of a script"},
		{name: "here-document to sh -", command: "sh - <<EOF\necho {{issue_title}}\nEOF", refused: "at 2:6 is part of a script"},
		{name: "here-document to sh /dev/stdin", command: "sh /dev/stdin <<EOF\necho {{issue_title}}\nEOF", refused: "at 2:6 is part of a script"},
		{name: "here-document to bash behind env and timeout", command: "env A=1 timeout -s KILL 5 bash -e <<EOF\necho {{issue_title}}\nEOF", refused: "at 2:6 is part of a script"},
		{name: "here-document to a block running sh", command: "{ sh; } <<EOF\necho {{issue_title}}\nEOF", refused: "at 2:6 is part of a script"},
		{name: "here-string to bash", command: `bash <<<"echo {{issue_title}}"`, bash: true, refused: "cannot parse the command as sh at 1:6"},
		{name: "here-document to sh behind sudo", command: "sudo -u root sh <<EOF\necho {{issue_title}}\nEOF", refused: "at 2:6 is part of a script"},
		{name: "here-document to time sh", command: "time -p sh <<EOF\necho {{issue_title}}\nEOF", refused: "at 2:6 is part of a script"},
		{name: "here-document read as data by sh -c", command: "sh -c cat <<EOF\n{{issue_title}}\nEOF", want: title + "\n"},
		{name: "here-document read as data by a script file", command: "echo cat >s.sh; sh s.sh <<EOF\n{{issue_title}}\nEOF", want: title + "\n"},
		{name: "here-document to grep sh", command: "grep -c sh <<EOF\n{{issue_title}}\nEOF", want: "0\n"},

		// What a pipeline writes into such a shell is its script.
		{name: "pipe into sh", command: `printf '%s\n' "echo {{issue_title}}" | sh`, refused: "{{issue_title}} at 1:21 is part of a script that the shell parses again"},
		{name: "pipe through cat into sh", command: `echo "echo {{issue_title}}" | cat | sh -x`, refused: "at 1:12 is part of a script"},
		{name: "pipe into bash -s behind timeout", command: `echo "echo {{issue_title}}" | timeout 5 bash -s`, refused: "at 1:12 is part of a script"},
		{name: "pipe into a block running sh", command: `echo "echo {{issue_title}}" | { sh; }`, refused: "at 1:12 is part of a script"},
		{name: "pipe into . /dev/stdin", command: `echo "echo {{issue_title}}" | . /dev/stdin`, refused: "at 1:12 is part of a script"},
		{name: "pipe into sh -c reading data", command: `printf '%s' {{issue_title}} | sh -c cat`, want: title},
		{name: "pipe into grep sh", command: `printf '%s\n' {{issue_title}} | grep -c sh`, want: "0\n"},
		{name: "pipe into grep bash", command: `printf '%s\n' {{issue_title}} | grep -c bash`, want: "0\n"},
		{name: "after a pipe into sh", command: `echo 'echo ok' | sh; printf '%s' {{issue_title}}`, want: "ok\n" + title},

		// Commands that run the rest of their arguments as a command.
		{name: "command eval", command: `command eval "echo {{issue_title}}"`, refused: "at 1:20 is part of a script"},
		{name: "builtin eval", command: `builtin eval "echo {{issue_title}}"`, bash: true, refused: "at 1:20 is part of a script"},
		{name: "command sh -c", command: `command -p sh -c "echo {{issue_title}}"`, refused: "at 1:24 is part of a script"},
		{name: "exec sh -c", command: `exec -a x sh -c "echo {{issue_title}}"`, bash: true, refused: "at 1:23 is part of a script"},
		{name: "env sh -c", command: `env -u X A=1 sh -c "echo {{issue_title}}"`, refused: "at 1:26 is part of a script"},
		{name: "timeout sh -c", command: `timeout 5 sh -c "echo {{issue_title}}"`, refused: "at 1:23 is part of a script"},
		{name: "command alias", command: "command alias x=\"echo {{issue_title}}\"\nx", refused: "at 1:23 is part of a script"},

		// Shell options that take the next word.
		{name: "bash -O extglob -c", command: `bash -O extglob -c "echo {{issue_title}}"`, refused: "{{issue_title}} at 1:26 is part of a script"},
		{name: "bash -eO extglob -c", command: `bash -eO extglob -c "echo {{issue_title}}"`, refused: "at 1:27 is part of a script"},
		{name: "bash --rcfile -c", command: `bash --rcfile /dev/null -c "echo {{issue_title}}"`, refused: "at 1:34 is part of a script"},
		{name: "bash --init-file -c", command: `bash --init-file /dev/null -c "echo {{issue_title}}"`, refused: "at 1:37 is part of a script"},
		{name: "sh -o errexit -c", command: `sh -o errexit -c "echo {{issue_title}}"`, refused: "at 1:24 is part of a script"},
		{name: "sh +o errexit -c", command: `sh +o errexit -c "echo {{issue_title}}"`, refused: "at 1:24 is part of a script"},
		// Found by FuzzScript (testdata/fuzz/FuzzScript/0104310a11108644):
		// dash, bash and zsh read +c as -c, and bash +s as -s.
		{name: "sh +c", command: `sh +c "echo {{issue_title}}"`, refused: "{{issue_title}} at 1:13 is part of a script"},
		{name: "sh -e +c", command: `sh -e +c "echo {{issue_title}}"`, refused: "at 1:16 is part of a script"},
		{name: "bash +s with an operand", command: "bash +s x <<EOF\necho {{issue_title}}\nEOF", bash: true, refused: "at 2:6 is part of a script"},
		// Found by FuzzScript (testdata/fuzz/FuzzScript/e3905d906d704c20):
		// an unset $A vanishes, and sh reads its script from the pipe; a
		// $A set to -c makes the next word the script.
		{name: "pipe into sh $A", command: `printf '%s\n' "echo {{issue_title}}" | sh $A`, refused: "at 1:21 is part of a script"},
		{name: "here-document to sh \"$@\"", command: "sh \"$@\" <<EOF\necho {{issue_title}}\nEOF", refused: "at 2:6 is part of a script"},
		{name: "sh $A then the value", command: `sh $A "echo {{issue_title}}"`, refused: "at 1:13 is part of a script"},
		// A placeholder among a shell's options is such a value too: a
		// title of -c would make the next word the script.
		{name: "sh {{issue_title}} then a value", command: `sh {{issue_title}} "echo {{issue_body}}"`, refused: "is part of a script"},
		{name: "sh -c -o errexit", command: `sh -c -o errexit "echo {{issue_title}}"`, refused: "at 1:24 is part of a script"},
		{name: "argument after sh -o errexit -c", command: `sh -o errexit -c 'printf "%s" "$1"' sh {{issue_title}}`, want: title},
		{name: "argument after bash -O extglob -c", command: `bash -O extglob -c 'printf "%s" "$1"' sh {{issue_title}}`, want: title},

		// Declarations whose values bash evaluates as arithmetic.
		{name: "declare -i", command: `declare -i n={{issue_title}}`, bash: true, refused: "{{issue_title}} at 1:14 stands in arithmetic"},
		{name: "typeset -i", command: `typeset -i n={{issue_title}}`, bash: true, refused: "at 1:14 stands in arithmetic"},
		{name: "local -i", command: `f() { local -i n={{issue_title}}; }; f`, bash: true, refused: "at 1:18 stands in arithmetic"},
		{name: "declare -ri", command: `declare -ri n={{issue_title}}`, bash: true, refused: "at 1:15 stands in arithmetic"},
		{name: "declare -i -r", command: `declare -i -r n={{issue_title}}`, bash: true, refused: "at 1:17 stands in arithmetic"},
		{name: "export -i (zsh's integer export)", command: `export -i n={{issue_title}}`, refused: "at 1:13 stands in arithmetic"},
		{name: "assigned to an integer", command: `declare -i n; n={{issue_title}}`, bash: true, refused: "at 1:17 stands in arithmetic"},
		{name: "appended to an integer", command: `n={{issue_title}}; declare -i n; n+={{issue_title}}`, bash: true, refused: "at 1:37 stands in arithmetic"},
		{name: "bash's integer variables", command: `RANDOM={{issue_title}}; OPTIND={{issue_title}}`, bash: true, refused: "at 1:8 stands in arithmetic"},
		{name: "array element index", command: `a=([{{issue_title}}]=1)`, bash: true, refused: "cannot parse the command as sh"},
		{name: "declare behind builtin", command: `builtin declare -i n={{issue_title}}`, bash: true, refused: "at 1:22 stands in a word that declare"},
		{name: "declare +i", command: `declare +i n={{issue_title}}; printf '%s' "$n"`, bash: true, want: title},
		{name: "declare -x", command: `declare -x n={{issue_title}}; printf '%s' "$n"`, bash: true, want: title},
		{name: "local", command: `f() { local n={{issue_title}}; printf '%s' "$n"; }; f`, want: title},
		{name: "export", command: `export n={{issue_title}}; sh -c 'printf "%s" "$n"'`, want: title},

		// Names: bash evaluates the subscript of a name taken from a value.
		{name: "declare -n", command: `declare -n r={{issue_title}}; echo "$r"`, bash: true, refused: "{{issue_title}} at 1:14 stands in a variable, function or loop name"},
		{name: "nameref assigned", command: `declare -n r; r={{issue_title}}; echo "$r"`, bash: true, refused: "at 1:17 stands in a variable"},
		{name: "name and value of declare in one word", command: `declare "{{issue_title}}=1"`, bash: true, refused: "at 1:10 stands in a word that declare"},
		{name: "array of declare -a in one word", command: `declare -a "a=({{issue_title}})"`, bash: true, refused: "at 1:16 stands in a word that declare"},
		{name: "loop over a nameref", command: `declare -n r; for r in {{issue_title}}; do :; done`, bash: true, refused: "at 1:24 stands in a variable"},
		{name: "export -n", command: `export -n x={{issue_title}}; printf '%s' "$x"`, bash: true, want: title},
		{name: "read", command: "read {{issue_title}} <<EOF\nx\nEOF", refused: "at 1:6 stands in a variable"},
		{name: "read -r -p", command: "read -rp {{issue_title}} v <<EOF\nx\nEOF\nprintf '%s' \"$v\"", want: "x"},
		{name: "unset", command: `a[0]=1; unset {{issue_title}}`, bash: true, refused: "at 1:15 stands in a variable"},
		{name: "unset -v", command: `a[0]=1; unset -v {{issue_title}}`, bash: true, refused: "at 1:18 stands in a variable"},
		{name: "printf -v", command: `printf -v {{issue_title}} x`, bash: true, refused: "at 1:11 stands in a variable"},
		{name: "printf -v value", command: `printf -v v '%s' {{issue_title}}; printf '%s' "$v"`, bash: true, want: title},
		{name: "printf format from a value", command: `printf "{{issue_title}}" x`, bash: true, title: `-va[$(touch MARK)]`,
			refused: "{{issue_title}} at 1:9 stands at the start of printf's format"},
		{name: "printf format after -v NAME", command: `printf -v x {{issue_title}} y`, bash: true, title: `-va[$(touch MARK)]`,
			refused: "at 1:13 stands at the start of printf's format"},
		{name: "printf format after text", command: `printf "Title: {{issue_title}}"`, want: "Title: " + title},
		{name: "test -v", command: `test -v {{issue_title}}`, bash: true, refused: "at 1:9 stands in a variable"},
		{name: "[ -v ]", command: `[ -v {{issue_title}} ]`, bash: true, refused: "at 1:6 stands in a variable"},
		{name: "[ -n ]", command: `[ -n {{issue_title}} ] && printf '%s' {{issue_title}}`, want: title},

		// Variables the shell reads again.
		{name: "alias", command: "alias x=\"echo {{issue_title}}\"\nx", refused: "{{issue_title}} at 1:15 is part of a script that the shell parses again"},
		{name: "PS4", command: `PS4={{issue_title}}; set -x; :`, bash: true, refused: "at 1:5 is part of a script"},
		{name: "BASH_ENV", command: `BASH_ENV={{issue_title}} bash -c :`, refused: "at 1:10 is part of a script"},
		{name: "BASH_ENV given to env", command: `env BASH_ENV={{issue_title}} bash -c :`, refused: "at 1:14 is part of a script"},
		{name: "exported OPTIND", command: `export OPTIND={{issue_title}}`, bash: true, refused: "at 1:15 stands in arithmetic"},

		// [[ ]] evaluates as arithmetic only the operands of -eq ... -ge, and takes a name after -v and -R.
		{name: "[[ -n ]]", command: `[[ -n "{{issue_title}}" ]] && printf '%s' {{issue_title}}`, bash: true, want: title},
		{name: "[[ == pattern ]]", command: `[[ "{{stage}}" == implement* ]] && echo yes`, bash: true, want: "yes\n"},
		{name: "[[ -f ]]", command: `[[ -f "{{issue_title}}" ]] || echo none`, bash: true, want: "none\n"},
		{name: "[[ && != =~ ]]", command: `[[ {{issue_title}} != x && {{issue_title}} =~ ^a ]] && echo match`, bash: true, want: "match\n"},
		{name: "[[ -eq ]]", command: `[[ {{issue_title}} -eq 1 ]]`, bash: true, refused: "{{issue_title}} at 1:4 stands in [[ ]] as an operand of"},
		{name: "[[ -lt ]] on the right", command: `[[ 1 -lt {{issue_title}} ]]`, bash: true, refused: "at 1:10 stands in [[ ]] as an operand of"},
		{name: "[[ -ge ]] after &&", command: `[[ -n x && {{issue_title}} -ge 1 ]]`, bash: true, refused: "at 1:12 stands in [[ ]] as an operand of"},
		{name: "[[ -ne ]] on a command substitution", command: `[[ $(echo {{issue_title}}) -ne 0 ]]`, bash: true, refused: "at 1:11 stands in [[ ]] as an operand of"},
		{name: "[[ -v ]]", command: `[[ -v {{issue_title}} ]]`, bash: true, refused: "at 1:7 stands in a variable"},
		{name: "[[ -R ]]", command: `[[ -R {{issue_title}} ]]`, bash: true, refused: "at 1:7 stands in a variable"},
	}
	for _, tt := range tests {
		for _, shell := range []string{"dash", "bash"} {
			if tt.bash && shell != "bash" {
				continue
			}
			t.Run(tt.name+"/"+shell, func(t *testing.T) {
				t.Parallel()
				issue := hookstest.NewIssue(t)
				issue.Title = cmp.Or(tt.title, title)
				text, env, err := Script(tt.command, issue)
				if err == nil {
					out := runAsSh(t, shell, issue.Dir, text, env)
					assert.NoFileExists(t, filepath.Join(issue.Dir, "MARK"), "the title ran as code")
					if tt.refused == "" {
						assert.Equal(t, tt.want, out)
					}
				}
				if tt.refused != "" {
					require.Error(t, err, "the command should be refused")
					assert.Contains(t, err.Error(), tt.refused)
				} else {
					require.NoError(t, err)
				}
			})
		}
	}
}

// runAsSh runs text in dir with shell as sh: the shell that runs text and
// any sh that text starts. Its output is what it wrote to stdout; stderr
// goes to the test log.
func runAsSh(t *testing.T, shell, dir, text string, env []string) string {
	t.Helper()
	path, err := exec.LookPath(shell)
	if err != nil {
		t.Skipf("%s is not installed", shell)
	}
	bin := t.TempDir()
	sh := filepath.Join(bin, "sh")
	require.NoError(t, os.Symlink(path, sh))
	cmd := exec.CommandContext(t.Context(), sh, "-c", text)
	cmd.Dir = dir
	cmd.Env = append(env, "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	t.Logf("%s -c %q: %v\n%s", shell, text, err, stderr.String())
	return string(out)
}
