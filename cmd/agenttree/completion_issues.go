package main

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/agenttree/agenttree/cmd/agenttree/cmdutil"
	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/examples"
	"github.com/agenttree/agenttree/internal/textsafe"
	"github.com/agenttree/agenttree/stages"
)

type config = *stages.Config

func exampleNames() []string { return examples.Names() }

// offered says which issues the command named cmd can act on, so that
// Tab offers those and not every issue there is: a review's verdict for
// issues at a review, resume for escalated ones, the commands that move
// an issue for unfinished ones; any issue for the rest (show, status,
// clean, verify, ...).
func offered(cmd string) func(iss *issues.Issue, at *stages.Node) bool {
	switch cmd {
	case "approve", "reject":
		return func(_ *issues.Issue, at *stages.Node) bool { return at != nil && at.HumanReview() }
	case "resume":
		return func(iss *issues.Issue, _ *stages.Node) bool { return iss.Escalated != nil }
	case "next", "move", "skip", "abort", "start":
		return func(_ *issues.Issue, at *stages.Node) bool { return at == nil || at.Terminal() == stages.TerminalNone }
	}
	return func(*issues.Issue, *stages.Node) bool { return true }
}

// issues lists the issues cmd can act on, each with its title and stage.
func (c completer) issues(cmd *cobra.Command) ([]cobra.Completion, cobra.ShellCompDirective) {
	e, err := c.quiet().Engine(cmd.Context())
	if err != nil {
		return none()
	}
	list, _ := e.Store.List()
	keep := offered(cmd.Name())
	out := make([]cobra.Completion, 0, len(list))
	for _, iss := range list {
		at, _ := e.Config.Node(iss.Stage)
		if !keep(iss, at) {
			continue
		}
		desc := fmt.Sprintf("%s (%s)", textsafe.Line(iss.Title, 60), iss.Stage)
		out = append(out, cobra.CompletionWithDesc(strconv.Itoa(iss.ID), desc))
	}
	return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveKeepOrder
}

// stages lists the stages a command's STAGE or --to can name: with the
// issue already on the line (its ID, or --issue), the stages of its flow
// (for reject, those before the review, where it can send the issue
// back); else every stage of the pipeline, in order.
func (c completer) stages(cmd *cobra.Command, done []string) ([]cobra.Completion, cobra.ShellCompDirective) {
	cfg, _, err := c.quiet().LoadConfig()
	if err != nil {
		return none()
	}
	if iss := c.issueOnLine(cmd, done); iss != nil {
		if f, err := cfg.Flow(iss.Flow); err == nil {
			paths := f.Paths()
			if cmd.Name() == "reject" {
				if i := slices.Index(paths, iss.Stage); i >= 0 {
					paths = paths[:i]
				}
			}
			return values(paths)
		}
	}
	var out []string
	for _, f := range cfg.Flows {
		for _, path := range f.Paths() {
			if !slices.Contains(out, path) {
				out = append(out, path)
			}
		}
	}
	return values(out)
}

// issueOnLine is the issue the command line names so far: its ID
// argument, else its --issue flag; nil when it names none that can be
// read.
func (c completer) issueOnLine(cmd *cobra.Command, done []string) *issues.Issue {
	arg := ""
	if args := usageArgs(cmd.Use); len(args) > 0 && args[0] == "ID" && len(done) > 0 {
		arg = done[0]
	} else if f := cmd.Flags().Lookup("issue"); f != nil {
		arg = f.Value.String()
	}
	if arg == "" {
		return nil
	}
	id, err := cmdutil.ParseID(arg)
	if err != nil {
		return nil
	}
	e, err := c.quiet().Engine(cmd.Context())
	if err != nil {
		return nil
	}
	iss, err := e.Store.Get(id)
	if err != nil {
		return nil
	}
	return iss
}
