package main

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/cmd/agenttree/cmdutil"
)

func quietApp(t *testing.T, out io.Writer) *cmdutil.App {
	return &cmdutil.App{WD: t.TempDir(), Getenv: func(string) string { return "" },
		In: strings.NewReader(""), Out: out, ErrOut: out}
}

// names are the names of cmds.
func names(cmds []*cobra.Command) []string {
	var list []string
	for _, c := range cmds {
		list = append(list, c.Name())
	}
	return list
}

// Each group's names are the commands it makes, and no name is in two
// groups: a run builds only the group its command names, and a name
// missing here would still run, but through the whole tree.
func TestGroupsNameTheirCommands(t *testing.T) {
	seen := map[string]bool{}
	for _, g := range groups() {
		built := names(g.cmds(quietApp(t, io.Discard)))
		assert.ElementsMatch(t, g.names, built)
		for _, name := range built {
			assert.False(t, seen[name], "%s is in two groups", name)
			seen[name] = true
		}
	}
	var all []string
	for _, c := range rootCmd(quietApp(t, io.Discard)).Commands() {
		all = append(all, c.Name())
	}
	for name := range seen {
		assert.Contains(t, all, name)
	}
}

func TestRootForBuildsOnlyTheGroupNamed(t *testing.T) {
	tests := []struct {
		args []string
		has  string // a command of the group built
		not  string // "" when the whole tree is built
	}{
		{args: []string{"next", "-i", "1"}, has: "approve", not: "status"},
		{args: []string{"--config", "x.yaml", "status", "3"}, has: "watch", not: "next"},
		{args: []string{"--config=x.yaml", "--debug", "issue", "create", "T"}, has: "issue", not: "next"},
		{args: []string{"-h", "inbox"}, has: "send", not: "next"},
		{args: []string{"--config", "next"}, has: "status"},
		{args: []string{"help", "next"}, has: "status"},
		{args: []string{"--", "next"}, has: "status"},
		{args: []string{cobra.ShellCompRequestCmd, "ne"}, has: "status"},
		{args: []string{"nxt"}, has: "status"},
		{args: nil, has: "status"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			built := names(rootFor(quietApp(t, io.Discard), tt.args).Commands())
			assert.Contains(t, built, tt.has)
			if tt.not != "" {
				assert.NotContains(t, built, tt.not)
				assert.NotContains(t, built, "completion")
			} else {
				assert.Contains(t, built, "completion")
			}
		})
	}
}

// A command's help, flags and errors are the same whether the run built
// its group alone or the whole tree.
func TestRootForAnswersAsTheWholeTree(t *testing.T) {
	execute := func(root *cobra.Command, out *bytes.Buffer, args []string) string {
		root.SetArgs(args)
		err := root.Execute()
		if err != nil {
			out.WriteString("error: " + err.Error())
		}
		return out.String()
	}
	for _, g := range groups() {
		for _, name := range g.names {
			for _, args := range [][]string{{name, "--help"}, {name, "--no-such-flag"}, {"--debug", name, "-h"}} {
				var alone, whole bytes.Buffer
				got := execute(rootFor(quietApp(t, &alone), args), &alone, args)
				want := execute(rootCmd(quietApp(t, &whole)), &whole, args)
				require.NotEmpty(t, want)
				assert.Equal(t, want, got, "agenttree %s", strings.Join(args, " "))
			}
		}
	}
}
