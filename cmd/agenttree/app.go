package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agenttree/agenttree/cmd/agenttree/boardcmd"
	"github.com/agenttree/agenttree/cmd/agenttree/cmdutil"
	"github.com/agenttree/agenttree/cmd/agenttree/configcmd"
	"github.com/agenttree/agenttree/cmd/agenttree/controllercmd"
	"github.com/agenttree/agenttree/cmd/agenttree/democmd"
	"github.com/agenttree/agenttree/cmd/agenttree/flowcmd"
	"github.com/agenttree/agenttree/cmd/agenttree/inboxcmd"
	"github.com/agenttree/agenttree/cmd/agenttree/issuecmd"
	"github.com/agenttree/agenttree/cmd/agenttree/migratecmd"
	"github.com/agenttree/agenttree/cmd/agenttree/sessioncmd"
	"github.com/agenttree/agenttree/cmd/agenttree/statuscmd"
	"github.com/agenttree/agenttree/cmd/agenttree/trustcmd"
	"github.com/agenttree/agenttree/internal/atomicfile"
	"github.com/agenttree/agenttree/internal/exitcode"
)

// run runs the CLI with args in the working directory wd.
func run(ctx context.Context, wd string, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) int {
	a := &cmdutil.App{WD: wd, Getenv: getenv, In: stdin, Out: stdout, ErrOut: stderr}
	defer a.Close()
	root := rootFor(a, args)
	if slices.ContainsFunc(args, func(a string) bool { return a == cobra.ShellCompRequestCmd || a == cobra.ShellCompNoDescRequestCmd }) {
		// Only the shell's completion request reads them: wiring them
		// walks every command, which every other run (an agent's next,
		// hundreds a day) would pay for at start.
		addCompletions(a, root)
	}
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return int(exitcode.OK)
	}
	var se cmdutil.SilentExit
	if errors.As(err, &se) {
		return int(se)
	}
	err = atomicfile.Explain(err) // a full or read-only disk: what to do
	fmt.Fprintln(stderr, "error:", err)
	code := cmdutil.ExitCode(err)
	if wantsJSON(args) {
		// Programs asked for JSON: they get it on failure too.
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(map[string]any{"error": err.Error(), "exit_code": code})
	}
	return code
}

// wantsJSON says whether args ask for JSON output.
func wantsJSON(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if a == "--json" || a == "--json=true" {
			return true
		}
	}
	return false
}

// group is a command group: the names of the commands it makes, and how.
type group struct {
	names []string
	cmds  func(*cmdutil.App) []*cobra.Command
}

// groups are agenttree's command groups, in the order help lists them.
func groups() []group {
	return []group{
		{[]string{"init", "validate", "stages", "graph", "schema"}, configcmd.Commands},
		{[]string{"issue"}, issuecmd.Commands},
		{[]string{"next", "approve", "resume", "skip", "abort", "reject", "move"}, flowcmd.Commands},
		{[]string{"status", "watch"}, statuscmd.Commands},
		{[]string{"inbox", "send"}, inboxcmd.Commands},
		{[]string{"board"}, boardcmd.Commands},
		{[]string{"controller", "node", "pr", "__ci-run"}, controllercmd.Commands},
		{[]string{"clean", "token", "start", "attach", "stop", "agents", "assign"}, sessioncmd.Commands},
		{[]string{"verify", "repair", "doctor"}, trustcmd.Commands},
		{[]string{"migrate"}, migratecmd.Commands},
		{[]string{"demo", "demo-agent"}, democmd.Commands},
	}
}

// rootFor is the command tree a run with args needs: the root and the one
// group the command args name is in, when they name one. Building all
// forty commands, their flags and help, is a fifth of what an agent's
// `next` costs in the process (bench/README.md); help, completion,
// `version` and a command line that names no command get the whole tree.
func rootFor(a *cmdutil.App, args []string) *cobra.Command {
	name := commandName(args)
	for _, g := range groups() {
		if slices.Contains(g.names, name) {
			root := newRoot(a)
			root.AddCommand(g.cmds(a)...)
			return root
		}
	}
	return rootCmd(a)
}

// commandName is the first word of args that is neither a root flag nor
// --config's value: the command they ask for ("" for none).
func commandName(args []string) string {
	for i := 0; i < len(args); i++ {
		switch arg := args[i]; {
		case arg == "--":
			return ""
		case arg == "--config":
			i++
		case strings.HasPrefix(arg, "-"):
		default:
			return arg
		}
	}
	return ""
}

// newRoot is the agenttree command with its flags and streams, and no
// command under it.
func newRoot(a *cmdutil.App) *cobra.Command {
	root := &cobra.Command{
		Use:           "agenttree",
		Short:         "Move issues through the pipeline declared in .agenttree.yaml",
		Version:       version(),
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetVersionTemplate("agenttree {{.Version}}\n")
	root.PersistentFlags().StringVar(&a.ConfigPath, "config", "", "path to .agenttree.yaml (default: found by walking up from the current directory)")
	root.PersistentFlags().BoolVar(&a.Debug, "debug", false, "log what the engine does to stderr")
	// The streams first: the completion scripts write where they were
	// when their command was made.
	root.SetIn(a.In)
	root.SetOut(a.Out)
	root.SetErr(a.ErrOut)
	return root
}

// rootCmd is the agenttree command, every group under it, for the
// invocation a.
func rootCmd(a *cmdutil.App) *cobra.Command {
	root := newRoot(a)
	for _, g := range groups() {
		root.AddCommand(g.cmds(a)...)
	}
	root.AddCommand(versionCmd())
	root.InitDefaultCompletionCmd()
	if c, _, err := root.Find([]string{"completion"}); err == nil {
		c.Example = "  source <(agenttree completion bash)            # this shell; add it to ~/.bashrc to keep it\n" +
			"  agenttree completion zsh > \"${fpath[1]}/_agenttree\"\n" +
			"  agenttree completion fish > ~/.config/fish/completions/agenttree.fish"
	}
	return root
}
