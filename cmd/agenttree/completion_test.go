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

	"github.com/agenttree/agenttree/cmd/agenttree/cmdutil"
	"github.com/agenttree/agenttree/examples"
	"github.com/agenttree/agenttree/internal/testpipeline"
)

func TestCompletionOffersIssuesAndStages(t *testing.T) {
	w := newWorkspace(t, testpipeline.Read(t, "cli"))
	w.create(t, "Add login")
	w.create(t, "Fix the bug")
	w.create(t, "Ship it")
	w.create(t, "Quick fix", "--flow", "quick")
	for _, move := range [][]string{{"move", "2", "plan.review"}, {"move", "3", "accepted"}} {
		r := w.byHand(t, humanEnv, append(move, "--reason", "for the test")...)
		require.Equal(t, 0, r.code, r.stderr)
	}
	login, bug, ship, quick := "1\tAdd login (backlog)", "2\tFix the bug (plan.review)", "3\tShip it (accepted)", "4\tQuick fix (backlog)"
	allStages := []string{"backlog", "plan.draft", "plan.review", "implement.code", "implement.feedback", "security",
		"implementation_review", "accepted", "not_doing"}
	for _, tt := range []struct {
		name string
		args []string
		want []string // exactly, in order
	}{
		{name: "any issue to show", args: []string{"issue", "show", ""}, want: []string{login, bug, ship, quick}},
		{name: "an optional issue argument", args: []string{"status", ""}, want: []string{login, bug, ship, quick}},
		{name: "approve: issues at a review", args: []string{"approve", ""}, want: []string{bug}},
		{name: "next: unfinished issues", args: []string{"next", "--issue", ""}, want: []string{login, bug, quick}},
		{name: "move: the issue's flow", args: []string{"move", "1", ""}, want: allStages},
		{name: "move: a quick issue's flow", args: []string{"move", "4", ""}, want: []string{"backlog", "implement.code", "accepted"}},
		{name: "reject --to: before the review", args: []string{"reject", "2", "--to", ""}, want: []string{"backlog", "plan.draft"}},
		{name: "--stage: every stage", args: []string{"issue", "list", "--stage", ""}, want: allStages},
		{name: "--flow", args: []string{"issue", "create", "T", "--flow", ""}, want: []string{"default", "quick"}},
		{name: "--role: the roles agents work in", args: []string{"start", "1", "--role", ""}, want: []string{"developer", "reviewer"}},
		{name: "--format", args: []string{"graph", "--format", ""}, want: []string{"mermaid", "dot"}},
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
			assert.Equal(t, tt.want, got)
		})
	}
	r := w.run(t, humanEnv, "__complete", "init", "--template", "")
	require.Equal(t, 0, r.code, r.stderr)
	for _, name := range examples.Names() {
		assert.Contains(t, r.stdout, name+"\n")
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
