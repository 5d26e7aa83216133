package hooks

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/stages"
)

func TestRenderCommand(t *testing.T) {
	vars := map[string]string{"issue_id": "7", "t": "it's", "empty": ""}
	tests := []struct {
		name string
		tmpl string
		want string
		err  string
	}{
		{"no placeholders", `echo "$HOME" '{x}'`, `echo "$HOME" '{x}'`, ""},
		{"unquoted", `echo {{issue_id}} {{ t }}`, `echo '7' 'it'\''s'`, ""},
		{"empty value stays one word", `test {{empty}} = ''`, `test '' = ''`, ""},
		{"unknown renders empty", `echo {{nope}}`, `echo ''`, ""},
		{"in single quotes", `echo 'id {{t}}'`, `echo 'id it'\''s'`, ""},
		{"in double quotes", `echo "id {{t}}"`, `echo "id "'it'\''s'""`, ""},
		{"after a closed quote", `echo "a"{{t}}'b'`, `echo "a"'it'\''s''b'`, ""},
		{"in $() inside double quotes", `echo "$(echo '{{t}}')"`, `echo "$(echo 'it'\''s')"`, ""},
		{"in $() with nested parens", `echo "$(f() (echo {{t}}); f)"`, `echo "$(f() (echo 'it'\''s'); f)"`, ""},
		{"after $() closed, back in double quotes", `echo "$(pwd) {{t}}"`, `echo "$(pwd) "'it'\''s'""`, ""},
		{"after backticks closed", "echo `pwd` {{t}}", `echo ` + "`pwd`" + ` 'it'\''s'`, ""},
		{"inside backticks", "echo \"`echo {{t}}`\"", "", "{{t}} cannot be quoted safely"},
		{"escaped double quote does not close", `echo "a\" {{t}}"`, `echo "a\" "'it'\''s'""`, ""},
		{"backslash before the placeholder", `echo x\{{t}}`, `echo x\\'it'\''s'`, ""},
		{"backslash before it in double quotes", `echo "x\{{t}}"`, `echo "x\\"'it'\''s'""`, ""},
		{"comment", "echo ok # {{t}}\n", "echo ok # it's\n", ""},
		{"# inside a word is not a comment", `echo a#{{t}}`, `echo a#'it'\''s'`, ""},
		{"after ${...} closed", `echo "${HOME}/{{issue_id}}"`, `echo "${HOME}/"'7'""`, ""},
		{"inside ${...}", `echo ${X:-{{t}}}`, "", "{{t}} cannot be quoted safely"},
		{"inside ${...} in double quotes", `echo "${X:-{{t}}}"`, "", "{{t}} cannot be quoted safely"},
		{"inside $'...'", `echo $'a {{t}}'`, "", "cannot be quoted safely"},
		{"after a here-document", "cat <<EOF\n{{t}}\nEOF", "", "after a here-document's <<"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := renderCommand(tt.tmpl, vars)
			if tt.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

// TestRunPlaceholdersCannotInject runs real shells on titles written to
// break out of their quoting. `rm` is shadowed by a script that only leaves
// a mark, so a broken quoting shows as a mark, not as a deleted disk.
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
	}
	commands := []struct {
		name string
		tmpl string
	}{
		{"bare", `printf '%s' {{issue_title}}`},
		{"single quotes", `printf '%s' '{{issue_title}}'`},
		{"double quotes", `printf '%s' "{{issue_title}}"`},
		{"command substitution", `printf '%s' "$(printf '%s' {{issue_title}})"`},
		{"single quotes in a command substitution", `printf '%s' "$(printf '%s' '{{issue_title}}')"`},
	}
	for _, title := range titles {
		for _, c := range commands {
			t.Run(c.name+"/"+title, func(t *testing.T) {
				issue := newIssue(t)
				issue.Title = title
				issue.WorkDir = issue.Dir
				o := callHook(t, context.Background(), "run", issue, Params{"command": c.tmpl})
				require.Equal(t, KindPass, o.Kind, o.Reason)
				want := title
				if c.name == "command substitution" || c.name == "single quotes in a command substitution" {
					want = trimTrailingNewlines(title)
				}
				assert.Equal(t, want, o.Outputs["output_tail"])
				assert.NoFileExists(t, mark)
			})
		}
	}
}

func trimTrailingNewlines(s string) string {
	for len(s) > 0 && s[len(s)-1] == '\n' {
		s = s[:len(s)-1]
	}
	return s
}

func TestRunMustPass(t *testing.T) {
	tests := []struct {
		name     string
		params   Params
		kind     Kind
		warnings []string
		reason   string
	}{
		{"default: a failure blocks", Params{"command": "echo no; exit 3"}, KindFail, nil, `command "echo no; exit 3" failed (exit 3, general)`},
		{"must_pass: true blocks", Params{"command": "exit 3", "must_pass": true}, KindFail, nil, "failed (exit 3"},
		{"must_pass: false warns", Params{"command": "echo no; exit 3", "must_pass": false}, KindPass,
			[]string{"run (must_pass: false) failed: command \"echo no; exit 3\" failed (exit 3, general):\nno"}, ""},
		{"must_pass: false on success", Params{"command": "true", "must_pass": false}, KindPass, nil, ""},
		{"the reason shows the rendered command", Params{"command": "echo {{issue_id}}; exit 1"}, KindFail, nil,
			`command "echo '7'; exit 1" failed`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			issue := newIssue(t)
			issue.WorkDir = issue.Dir
			o := callHook(t, context.Background(), "run", issue, tt.params)
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
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := stages.Parse(".agenttree.yaml", []byte("stages:\n  - name: a\n    pre_completion:\n      - "+tt.hook+"\n"), Builtin())
			if tt.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.err)
				return
			}
			require.NoError(t, err)
			n, _ := cfg.Node("a")
			_, pre := n.Leaving(nil)
			require.Len(t, pre, 1)
			assert.Equal(t, false, pre[0].Params["must_pass"])
			assert.Equal(t, "make test ISSUE={{issue_id}}", pre[0].Params["command"])
		})
	}
}
