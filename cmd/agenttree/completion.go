package main

import (
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agenttree/agenttree/cmd/agenttree/cmdutil"
	"github.com/agenttree/agenttree/stages"
)

// Shell completion is cobra's (`agenttree completion bash|zsh|fish`);
// what it completes comes from each command's usage line and flag names,
// so a new command that takes an ID, a STAGE or a --flow completes them
// without more code. Which issues a command is offered is in
// completion_issues.go.

// addCompletions gives every command under root the completion of the
// ID and STAGE arguments its usage line names, and of the flags whose
// values come from the config or the issues (flagValues).
func addCompletions(a *cmdutil.App, root *cobra.Command) {
	c := completer{app: a}
	flags := c.flagValues()
	var walk func(cmd *cobra.Command)
	walk = func(cmd *cobra.Command) {
		if args := usageArgs(cmd.Use); cmd.ValidArgsFunction == nil && len(args) > 0 {
			cmd.ValidArgsFunction = c.args(args)
		}
		for name, complete := range flags {
			if cmd.Flags().Lookup(name) != nil {
				_ = cmd.RegisterFlagCompletionFunc(name, complete)
			}
		}
		for _, sub := range cmd.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// usageArgs are the positional arguments a usage line such as
// "move ID STAGE --reason TEXT" names, brackets and dots dropped, up to
// its first flag.
func usageArgs(use string) []string {
	words := strings.Fields(use)
	if len(words) < 2 {
		return nil
	}
	var out []string
	for _, w := range words[1:] {
		if strings.HasPrefix(w, "-") || strings.HasPrefix(w, "[-") {
			break
		}
		out = append(out, strings.TrimSuffix(strings.Trim(w, "[]"), "..."))
	}
	return out
}

// completer completes from what the invocation can read: the config and
// the issues. It is best effort: where they cannot be read (an agent,
// whose reads go through the controller; no config), nothing is offered.
type completer struct{ app *cmdutil.App }

// quiet is the invocation, as its flags left it, with nothing on stderr:
// completion runs on every Tab, and the config's warnings would print
// into the prompt.
func (c completer) quiet() *cmdutil.App {
	q := *c.app
	q.ErrOut = io.Discard
	return &q
}

// values is a completion of plain values, in the order given.
func values(out []string) ([]cobra.Completion, cobra.ShellCompDirective) {
	return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveKeepOrder
}

func none() ([]cobra.Completion, cobra.ShellCompDirective) {
	return nil, cobra.ShellCompDirectiveNoFileComp
}

// args completes the argument at each position of args: issue ids for
// ID, stages for STAGE, nothing (and no file names) for the rest.
func (c completer) args(args []string) cobra.CompletionFunc {
	return func(cmd *cobra.Command, done []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(done) >= len(args) {
			return none()
		}
		switch args[len(done)] {
		case "ID":
			return c.issues(cmd)
		case "STAGE":
			return c.stages(cmd, done)
		}
		return none()
	}
}

// flagValues are the flags completed by name, whatever the command: what
// each takes is the same everywhere it is declared.
func (c completer) flagValues() map[string]cobra.CompletionFunc {
	return map[string]cobra.CompletionFunc{
		"issue": func(cmd *cobra.Command, _ []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
			return c.issues(cmd)
		},
		"to": func(cmd *cobra.Command, done []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
			return c.stages(cmd, done)
		},
		"stage": func(cmd *cobra.Command, _ []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
			return c.stages(cmd, nil)
		},
		"flow":  c.fromConfig(func(cfg config) []string { return cfg.FlowNames() }),
		"role":  c.fromConfig(roleNames),
		"agent": c.fromConfig(agentNames),
		"template": func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
			return values(exampleNames())
		},
		"format":     fixed("mermaid", "dot"),
		"log-format": fixed("text", "json"),
	}
}

// fixed completes a flag that takes one of names.
func fixed(names ...string) cobra.CompletionFunc {
	return func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return values(names)
	}
}

// fromConfig completes a flag with names read from the config.
func (c completer) fromConfig(names func(config) []string) cobra.CompletionFunc {
	return func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
		cfg, _, err := c.quiet().LoadConfig()
		if err != nil {
			return none()
		}
		return values(names(cfg))
	}
}

// roleNames are the roles agents work in: those of the config's stages
// and of its `roles:`.
func roleNames(cfg config) []string {
	var out []string
	add := func(r string) {
		if r != "" && !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	for _, f := range cfg.Flows {
		for _, n := range f.Nodes {
			if r := n.Role(); r != stages.RoleHuman && r != stages.RoleController {
				add(string(r)) // the roles agents work in
			}
		}
	}
	for _, r := range cfg.Roles {
		add(string(r.Role))
	}
	return out
}

// agentNames are the config's `agents:`.
func agentNames(cfg config) []string {
	out := make([]string, 0, len(cfg.Agents))
	for _, ag := range cfg.Agents {
		out = append(out, ag.Name)
	}
	return out
}
