package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/internal/cli/cmdutil"
	"github.com/agenttree/agenttree/internal/testpipeline"
)

func TestCompletionOffersIssuesAndStages(t *testing.T) {
	w := newWorkspace(t, testpipeline.Read(t, "cli"))
	w.create(t, "Add login")
	w.create(t, "Fix the bug")
	stages := []string{"backlog", "plan.draft", "plan.review"}
	issuesOffered := []string{"1\tAdd login (backlog)", "2\tFix the bug (backlog)"}
	for _, tt := range []struct {
		name string
		args []string
		want []string
	}{
		{name: "an issue argument", args: []string{"approve", ""}, want: issuesOffered},
		{name: "an optional issue argument", args: []string{"status", ""}, want: issuesOffered},
		{name: "a subcommand's", args: []string{"issue", "show", ""}, want: issuesOffered},
		{name: "a stage after the issue", args: []string{"move", "1", ""}, want: stages},
		{name: "--to", args: []string{"reject", "1", "--to", ""}, want: stages},
		{name: "--issue", args: []string{"next", "--issue", ""}, want: issuesOffered},
		{name: "free text", args: []string{"send", "1", ""}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := w.run(t, humanEnv, append([]string{"__complete"}, tt.args...)...)
			require.Equal(t, 0, r.code, r.stderr)
			got := strings.Split(strings.TrimSpace(r.stdout), "\n")
			got = got[:len(got)-1] // the directive
			if tt.want == nil {
				assert.Empty(t, got)
				return
			}
			assert.Subset(t, got, tt.want)
			if tt.want[0] == "backlog" {
				assert.Equal(t, tt.want, got[:3], "in the pipeline's order")
			}
		})
	}
}

func TestCompletionScriptsLoad(t *testing.T) {
	w := newWorkspace(t, testpipeline.Read(t, "cli"))
	w.create(t, "Add login")
	for _, shell := range []string{"bash", "zsh", "fish"} {
		r := invoke(t, humanEnv, "completion", shell)
		require.Equal(t, 0, r.code, r.stderr)
		assert.Contains(t, r.stdout, "agenttree", shell)
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash here")
	}
	script := filepath.Join(t.TempDir(), "agenttree.bash")
	require.NoError(t, os.WriteFile(script, []byte(invoke(t, humanEnv, "completion", "bash").stdout), 0o644))
	out, err := exec.Command(bash, "-n", script).CombinedOutput()
	require.NoError(t, err, "bash -n: %s", out)

	// A completion call as bash makes it when Tab is pressed after
	// `agenttree move 1 `, the binary on PATH. The script leans on the
	// bash-completion package, as in an interactive shell.
	const bashCompletion = "/usr/share/bash-completion/bash_completion"
	if _, err := os.Stat(bashCompletion); err != nil {
		t.Skip("no bash-completion package here (.ci/run installs it)")
	}
	call := `source ` + bashCompletion + `; source "$1"; COMP_WORDS=(agenttree --config "$2" move 1 ""); COMP_CWORD=5; COMP_LINE="${COMP_WORDS[*]}"; COMP_POINT=${#COMP_LINE}
__start_agenttree agenttree "" 1; printf '%s\n' "${COMPREPLY[@]}"`
	cmd := exec.Command(bash, "-c", call, "bash", script, w.config)
	cmd.Env = append(processEnv(), "PATH="+filepath.Dir(binary)+string(os.PathListSeparator)+os.Getenv("PATH"))
	out, err = cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Contains(t, strings.Fields(string(out)), "implement.code")
}

func TestVersion(t *testing.T) {
	r := invoke(t, humanEnv, "--version")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Regexp(t, `^agenttree (v\d|devel)`, r.stdout)
}

func TestAPersonAtAReviewIsToldToApproveOrReject(t *testing.T) {
	w := newWorkspace(t, `stages:
  - name: work
  - name: review
    human_review: true
    pre_completion:
      - file_exists: approved.md
  - name: accepted
    terminal: completion
`)
	id := w.create(t, "Add login")
	require.Equal(t, 0, w.run(t, humanEnv, "next", "-i", itoa(id)).code)
	r := w.run(t, humanEnv, "next", "-i", itoa(id))
	require.Equal(t, exitBlocked, r.code, r.stderr)
	assert.Contains(t, r.stdout, "issue 1 cannot be approved at review yet:\n  - ")
	assert.Contains(t, r.stdout, "approved.md")
	assert.Contains(t, r.stdout, "`agenttree approve 1`")
	assert.Contains(t, r.stdout, "`agenttree reject 1 --message TEXT`")
	assert.NotContains(t, r.stdout, "fix these")
	assert.Contains(t, w.run(t, humanEnv, "next", "-i", itoa(id), "--json").stdout, `"review": true`)
}

func TestEveryCommandHasExamples(t *testing.T) {
	a := &cmdutil.App{Getenv: func(string) string { return "" }}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			if sub.Hidden || sub.Name() == "help" {
				continue
			}
			if sub.Runnable() {
				assert.Contains(t, sub.Example, "agenttree ", "`%s --help` shows no example", sub.CommandPath())
			}
			if sub.Name() != "completion" { // cobra's scripts say how to load themselves
				walk(sub)
			}
		}
	}
	walk(rootCmd(a))
}
