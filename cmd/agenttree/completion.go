package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agenttree/agenttree/internal/cli/cmdutil"
	"github.com/agenttree/agenttree/internal/textsafe"
)

// Shell completion is cobra's (`agenttree completion bash|zsh|fish`);
// what it completes comes from each command's usage line, so a new
// command that takes an ID or a STAGE completes them without more code.

// addCompletions gives every command under root the completion of the
// ID and STAGE arguments its usage line names, and of its --to (a stage)
// and --issue/-i (an issue) flags.
func addCompletions(a *cmdutil.App, root *cobra.Command) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if args := usageArgs(c.Use); c.ValidArgsFunction == nil && len(args) > 0 {
			c.ValidArgsFunction = completeArgs(a, args)
		}
		flags := map[string]cobra.CompletionFunc{"to": completeStages(a), "issue": completeIssues(a)}
		for name, complete := range flags {
			if c.Flags().Lookup(name) != nil {
				_ = c.RegisterFlagCompletionFunc(name, complete)
			}
		}
		for _, sub := range c.Commands() {
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

// completeArgs completes the argument at each position of args: issue
// ids for ID, stages for STAGE, nothing (and no file names) for the rest.
func completeArgs(a *cmdutil.App, args []string) cobra.CompletionFunc {
	return func(cmd *cobra.Command, done []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(done) >= len(args) {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		switch args[len(done)] {
		case "ID":
			return completeIssues(a)(cmd, done, toComplete)
		case "STAGE":
			return completeStages(a)(cmd, done, toComplete)
		}
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
}

// completeIssues lists every issue, its title and stage beside it. It is
// best effort: where the issues cannot be read (an agent, whose reads go
// through the controller; no config), nothing is offered.
func completeIssues(a *cmdutil.App) cobra.CompletionFunc {
	return func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
		e, err := a.Engine()
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		list, _ := e.Store.List()
		out := make([]cobra.Completion, 0, len(list))
		for _, iss := range list {
			desc := fmt.Sprintf("%s (%s)", textsafe.Line(iss.Title, 60), iss.Stage)
			out = append(out, cobra.CompletionWithDesc(strconv.Itoa(iss.ID), desc))
		}
		return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveKeepOrder
	}
}

// completeStages lists every stage and substage of the pipeline, in
// order.
func completeStages(a *cmdutil.App) cobra.CompletionFunc {
	return func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
		cfg, _, err := a.LoadConfig()
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var out []cobra.Completion
		for _, f := range cfg.Flows {
			for _, path := range f.Paths() {
				if !slices.Contains(out, path) {
					out = append(out, path)
				}
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveKeepOrder
	}
}
