package issuecmd

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"gopkg.in/yaml.v3"

	"github.com/agenttree/agenttree/cmd/agenttree/cmdutil"
	"github.com/agenttree/agenttree/controller/api"
	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/engine/report"
	"github.com/agenttree/agenttree/internal/exitcode"
	"github.com/agenttree/agenttree/stages"
)

func newCmdIssue(a *cmdutil.App) *cobra.Command {
	cmd := &cobra.Command{Use: "issue", Short: "Create, list and show issues"}
	cmd.AddCommand(newCmdCreate(a, nil), newCmdList(a, nil), newCmdShow(a, nil))
	return cmd
}

// CreateOptions is what `issue create` was asked.
type CreateOptions struct {
	*cmdutil.App
	Req engine.NewIssue
	// Sets are the --set NAME=VALUE pairs, parsed into Req.Vars by the run.
	Sets []string
	JSON bool
}

func newCmdCreate(a *cmdutil.App, runF func(context.Context, *CreateOptions) error) *cobra.Command {
	opts := &CreateOptions{App: a}
	cmd := &cobra.Command{
		Use:   "create TITLE",
		Short: "Create an issue at the start of a flow",
		Example: `  agenttree issue create "Add login page"
  agenttree issue create "Fix typo" --flow quick --json`,
		Args: cmdutil.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Req.Title = args[0]
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return createRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Req.Flow, "flow", "", "flow to follow (default: the config's default flow)")
	cmd.Flags().StringVar(&opts.Req.Stage, "stage", "", "stage to start at (default: the flow's first)")
	cmd.Flags().StringSliceVar(&opts.Req.Labels, "label", nil, "label (repeatable)")
	cmd.Flags().StringArrayVar(&opts.Sets, "set", nil, "issue variable for conditions, NAME=VALUE (repeatable; VALUE is parsed as YAML)")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the issue as JSON")
	return cmd
}

func createRun(ctx context.Context, opts *CreateOptions) error {
	a, req := opts.App, opts.Req
	vars, err := parseSets(opts.Sets)
	if err != nil {
		return err
	}
	req.Vars = vars
	if c, err := a.Remote(); err != nil {
		return err
	} else if c != nil {
		if req.Stage != "" {
			return &cmdutil.ExitError{Code: exitcode.Usage, Err: errors.New("agents create issues at a flow's start; --stage is for people")}
		}
		return a.Ask(ctx, c, api.RouteCreate, api.CreateRequest{RequestID: api.RequestID(), Title: req.Title, Flow: req.Flow,
			Vars: req.Vars, Labels: req.Labels, JSON: opts.JSON})
	}
	e, err := a.Engine(ctx)
	if err != nil {
		return err
	}
	if req.By, err = a.Actor(e, 0); err != nil {
		return err
	}
	iss, err := e.Create(ctx, req)
	if err != nil {
		return err
	}
	return PrintCreated(a, iss, opts.JSON)
}

// PrintCreated prints a new issue as `issue create` does.
func PrintCreated(a *cmdutil.App, iss *issues.Issue, asJSON bool) error {
	if asJSON {
		return a.PrintJSON(iss)
	}
	report.Printer{Out: a.Out}.Created(iss)
	return nil
}

func parseSets(sets []string) (map[string]any, error) {
	if len(sets) == 0 {
		return nil, nil
	}
	vars := map[string]any{}
	for _, s := range sets {
		k, v, ok := strings.Cut(s, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("--set %q: write NAME=VALUE, e.g. --set needs_ui_review=true", s)
		}
		var val any
		if err := yaml.Unmarshal([]byte(v), &val); err != nil {
			val = v
		}
		vars[k] = val
	}
	return vars, nil
}

// ListOptions is what `issue list` was asked.
type ListOptions struct {
	*cmdutil.App
	// Stage keeps the issues at it or its substages; empty keeps all.
	Stage string
	JSON  bool
}

func newCmdList(a *cmdutil.App, runF func(context.Context, *ListOptions) error) *cobra.Command {
	opts := &ListOptions{App: a}
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List issues",
		Example: `  agenttree issue list
  agenttree issue list --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return listRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print as JSON")
	cmd.Flags().StringVar(&opts.Stage, "stage", "", "only issues at this stage (or its substages)")
	return cmd
}

func listRun(ctx context.Context, opts *ListOptions) error {
	a, stage, asJSON := opts.App, opts.Stage, opts.JSON
	e, err := a.Engine(ctx)
	if err != nil {
		return err
	}
	if stage != "" {
		if _, ok := e.Config.Node(stage); !ok {
			return &cmdutil.ExitError{Code: exitcode.Usage, Err: unknownStage(e.Config, stage)}
		}
	}
	all, err := e.Store.List()
	if err != nil && len(all) == 0 {
		return err
	}
	if err != nil {
		// The others are listed all the same.
		fmt.Fprintf(a.ErrOut, "warning: some issues cannot be read; fix or move them:\n%v\n", err)
	}
	list := []*issues.Issue{}
	for _, iss := range all {
		if stage == "" || iss.Stage == stage || strings.HasPrefix(iss.Stage, stage+".") {
			list = append(list, iss)
		}
	}
	if asJSON {
		return a.PrintJSON(list)
	}
	if len(list) == 0 {
		fmt.Fprintln(a.Out, "no issues; create one with `agenttree issue create TITLE`")
		return nil
	}
	tw := tabwriter.NewWriter(a.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTAGE\tFLOW\tTITLE")
	for _, iss := range list {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\n", iss.ID, cmdutil.SafeText(iss.Stage), cmdutil.SafeText(iss.Flow), cmdutil.SafeTitle(iss.Title))
	}
	return tw.Flush()
}

// ShowOptions is what `issue show` was asked.
type ShowOptions struct {
	*cmdutil.App
	// ID is the issue's id as given, parsed by the run.
	ID   string
	JSON bool
}

func newCmdShow(a *cmdutil.App, runF func(context.Context, *ShowOptions) error) *cobra.Command {
	opts := &ShowOptions{App: a}
	cmd := &cobra.Command{
		Use:   "show ID",
		Short: "Show an issue and its history",
		Example: `  agenttree issue show 3
  agenttree issue show 3 --json`,
		Args: cmdutil.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.ID = args[0]
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return showRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print as JSON")
	return cmd
}

func showRun(ctx context.Context, opts *ShowOptions) error {
	a := opts.App
	id, err := cmdutil.ParseID(opts.ID)
	if err != nil {
		return err
	}
	if c, err := a.Remote(); err != nil {
		return err
	} else if c != nil {
		return a.Ask(ctx, c, api.RouteShow, api.ShowRequest{Issue: id, JSON: opts.JSON})
	}
	e, err := a.Engine(ctx)
	if err != nil {
		return err
	}
	return Show(a, e, id, opts.JSON)
}

// Show prints issue id as `issue show` does.
func Show(a *cmdutil.App, e *engine.Engine, id int, asJSON bool) error {
	iss, err := e.Store.Get(id)
	if err != nil {
		return err
	}
	if asJSON {
		return a.PrintJSON(iss)
	}
	PrintIssue(a, e, iss)
	return nil
}

// PrintIssue prints iss as `issue show` does: the status views start
// with it.
func PrintIssue(a *cmdutil.App, e *engine.Engine, iss *issues.Issue) {
	report.Printer{Out: a.Out, ErrOut: a.ErrOut}.Issue(report.Show(e, iss))
}

// unknownStage says that stage is none of cfg's, with the closest one and
// where the stages are.
func unknownStage(cfg *stages.Config, stage string) error {
	var names []string
	for _, s := range cfg.Stages {
		names = append(names, s.Name)
		for _, sub := range s.Substages {
			names = append(names, s.Name+"."+sub.Name)
		}
	}
	hint := "the stages are " + strings.Join(names, ", ")
	if best := stages.Closest(stage, names); best != "" {
		hint = "did you mean " + best + "? " + hint
	}
	return fmt.Errorf("no stage %q in %s; %s", stage, cfg.File, hint)
}
