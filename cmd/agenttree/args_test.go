package main

import (
	"io"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"

	"github.com/agenttree/agenttree/cmd/agenttree/cmdutil"
)

// No command leaves a wrong number of arguments to cobra's words ("requires
// at least 2 arg(s), only received 1", "accepts at most 1 arg(s)"): each
// says in its own what is missing or too much.
func TestEveryCommandSaysWhichArgumentIsWrong(t *testing.T) {
	a := &cmdutil.App{WD: t.TempDir(), Getenv: func(string) string { return "" },
		In: strings.NewReader(""), Out: io.Discard, ErrOut: io.Discard}
	var walk func(*cobra.Command)
	checked := 0
	walk = func(cmd *cobra.Command) {
		for _, c := range cmd.Commands() {
			walk(c)
		}
		if cmd.Args == nil || cmd.HasSubCommands() {
			return
		}
		for n := range 6 {
			args := make([]string, n)
			for i := range args {
				args[i] = "1"
			}
			if err := cmd.Args(cmd, args); err != nil {
				checked++
				assert.NotContains(t, err.Error(), "arg(s)", "%s with %d arguments", cmd.CommandPath(), n)
			}
		}
	}
	walk(rootCmd(a))
	assert.Positive(t, checked)
}

func TestSendWithoutAMessageSaysSo(t *testing.T) {
	r := invokeIn(t, t.TempDir(), humanEnv, "send", "2")
	assert.Equal(t, exitUsage, r.code)
	assert.Contains(t, r.stderr, "agenttree send needs MESSAGE: `agenttree send ID MESSAGE...`")
}
