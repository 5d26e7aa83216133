package sandbox

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"mvdan.cc/sh/v3/syntax"
)

// TestLiteralAsShGivesIt holds literal to what sh itself prints for each
// word, in the same environment; the words it cannot work out must say so.
func TestLiteralAsShGivesIt(t *testing.T) {
	env := map[string]string{"HOME": "/home/agent", "AGENT": "claude", "DIR": "/opt/my tools", "EMPTY": ""}
	tests := []struct {
		word string
		ok   bool
	}{
		{`claude`, true},
		{`/usr/bin/claude`, true},
		{`'cla ude'`, true},
		{`"claude"`, true},
		{`cl\aude`, true},
		{`cl"a"'u'de`, true},
		{`"a\$b\"c\\d\e"`, true},
		{`$AGENT`, true},
		{`${AGENT}`, true},
		{`"$DIR/bin/x"`, true},
		{`$EMPTY`, true},
		{`$UNSET_HERE`, true},
		{`~`, true},
		{`~/bin/claude`, true},
		{`a~b`, true},
		{`*.sh`, true},
		{`${AGENT:-codex}`, false},
		{`${#AGENT}`, false},
		{`${AGENT%e}`, false},
		{`$(echo claude)`, false},
		{"`echo claude`", false},
		{`$((1+2))`, false},
		{`$'cl\x61ude'`, false},
		{`~root/bin/x`, false},
		{`$1`, false},
	}
	getenv := func(k string) string { return env[k] }
	for _, tt := range tests {
		t.Run(tt.word, func(t *testing.T) {
			file, err := syntax.NewParser().Parse(strings.NewReader("x "+tt.word), "")
			require.NoError(t, err)
			word := file.Stmts[0].Cmd.(*syntax.CallExpr).Args[1]
			got, ok := literal(word, getenv)
			require.Equal(t, tt.ok, ok)
			if !ok {
				return
			}
			cmd := exec.Command("sh", "-c", "printf %s "+tt.word)
			cmd.Env = nil
			for k, v := range env {
				cmd.Env = append(cmd.Env, k+"="+v)
			}
			cmd.Dir = t.TempDir() // no file for *.sh to match
			want, err := cmd.Output()
			require.NoError(t, err)
			assert.Equal(t, string(want), got)
		})
	}
}

func TestFirstProgram(t *testing.T) {
	t.Setenv("AGENT_UNDER_TEST", "codex")
	tests := []struct {
		command, want, err string
	}{
		{command: "claude --dangerously-skip-permissions", want: "claude"},
		{command: "FOO=1 exec claude", want: "exec"},
		{command: "cd /tmp && claude", want: "cd"},
		{command: `"$AGENT_UNDER_TEST" run`, want: "codex"},
		{command: "$(which claude)", want: ""},
		{command: "FOO=1", err: "runs no program"},
		{command: "claude 'unterminated", err: "is not valid shell"},
	}
	for _, tt := range tests {
		t.Run(tt.command, func(t *testing.T) {
			got, err := firstProgram(tt.command)
			if tt.err != "" {
				require.ErrorIs(t, err, ErrCommand)
				assert.ErrorContains(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestFindProgram(t *testing.T) {
	tests := []struct {
		command string
		err     string
	}{
		{command: "sh -c true"},
		{command: "cd / && no-such-agent-xyz"},
		{command: "$NO_SUCH_VARIABLE_XYZ run"},
		{command: "no-such-agent-xyz --flag", err: "runs no-such-agent-xyz, which is not installed"},
	}
	for _, tt := range tests {
		t.Run(tt.command, func(t *testing.T) {
			err := findProgram(tt.command)
			if tt.err == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, ErrCommand)
			assert.ErrorContains(t, err, tt.err)
		})
	}
}

func TestIsBuiltinAsBashSaysIt(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash is not installed")
	}
	for _, name := range []string{"cd", "exec", ":", ".", "[", "source", "printf", "ulimit", "claude", "sh", "git", "env"} {
		out, err := exec.Command("bash", "-c", `type -t "$1"`, "bash", name).Output()
		if err != nil && len(out) == 0 {
			out = []byte("none")
		}
		assert.Equal(t, strings.TrimSpace(string(out)) == "builtin", isBuiltin(name), "%s: bash says %s", name, out)
	}
}
