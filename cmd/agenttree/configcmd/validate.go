package configcmd

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agenttree/agenttree/cmd/agenttree/cmdutil"
	"github.com/agenttree/agenttree/internal/colour"
	"github.com/agenttree/agenttree/internal/exitcode"
	"github.com/agenttree/agenttree/stages"
	"github.com/agenttree/agenttree/stages/load"
)

// ValidateReport is what `validate --json` prints: the config's errors
// and warnings, and its flows when it loads.
type ValidateReport struct {
	File     string              `json:"file"`
	Valid    bool                `json:"valid"`
	Form     stages.Form         `json:"form,omitempty"`
	Stages   int                 `json:"stages,omitempty"` // 0: the config does not load
	Flows    []string            `json:"flows"`
	Errors   []stages.Diagnostic `json:"errors"`
	Warnings []stages.Diagnostic `json:"warnings"`
	// Unreviewed lists where a flow merges PRs no person reviewed, as
	// the config says it may (`merge_pr: {require_review: false}`).
	Unreviewed []stages.UnreviewedMerge `json:"unreviewed_merges"`
	// StepBacks says where each bare `step_back` (a failure policy that
	// names no stage) sends an issue.
	StepBacks []stages.StepBackRoute `json:"bare_step_backs"`
	// Diagnostics lists the errors and warnings together in file order,
	// flat, as the text output prints them.
	Diagnostics []DiagnosticJSON `json:"diagnostics"`
}

// DiagnosticJSON is one line of `validate`, for a program.
type DiagnosticJSON struct {
	File     string          `json:"file"`
	Line     int             `json:"line"`
	Col      int             `json:"col"`
	Severity stages.Severity `json:"severity"`
	Message  string          `json:"message"`
	Hint     string          `json:"hint,omitempty"`
}

// ValidateOptions is what `validate` was asked.
type ValidateOptions struct {
	*cmdutil.App
	JSON bool
}

func newCmdValidate(a *cmdutil.App, runF func(context.Context, *ValidateOptions) error) *cobra.Command {
	opts := &ValidateOptions{App: a}
	cmd := &cobra.Command{
		Use:   "validate",
		Short: "Check .agenttree.yaml and report every problem with its file:line:col",
		Long: `Check .agenttree.yaml and report every problem, each as
file:line:col: severity: message (hint), in file order. A YAML syntax
error is reported at the token that is wrong, and what else the file gets
wrong is reported too. Exits 2 when there is any error.`,
		Example: `  agenttree validate
  agenttree validate --json | jq '.diagnostics[] | "\(.line):\(.col) \(.message)"'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return validateRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the report as JSON")
	return cmd
}

func validateRun(ctx context.Context, opts *ValidateOptions) error {
	a := cmds{opts.App}
	rep, err := a.validateReport()
	if err != nil {
		return err
	}
	if opts.JSON {
		if err := a.PrintJSON(rep); err != nil {
			return err
		}
	} else {
		a.printValidation(rep)
	}
	if !rep.Valid {
		return cmdutil.SilentExit(exitcode.Usage)
	}
	return nil
}

// printValidation prints each diagnostic on stderr, then what the file
// holds when it is valid, or how many errors it has.
func (a cmds) printValidation(rep ValidateReport) {
	paint := colour.For(a.ErrOut, a.Getenv)
	for _, d := range rep.Diagnostics {
		line := stages.Diagnostic{Pos: stages.Pos{File: d.File, Line: d.Line, Col: d.Col}, Severity: d.Severity, Msg: d.Message, Hint: d.Hint}.String()
		if d.Severity == stages.SevError {
			line = paint.Bad(line)
		} else {
			line = paint.Warn(line)
		}
		fmt.Fprintln(a.ErrOut, line)
	}
	if rep.Valid {
		warned := ""
		if n := len(rep.Warnings); n > 0 {
			warned = ", " + plural(n, "warning")
		}
		fmt.Fprintf(a.Out, "%s: ok (%s form, %d stages, flows: %s%s%s)\n", rep.File, rep.Form, rep.Stages, strings.Join(rep.Flows, ", "), unreviewed(rep.Unreviewed), warned)
		for _, r := range rep.StepBacks {
			fmt.Fprintf(a.Out, "%s: note: %s\n", r.Pos, stepBackLine(r, rep))
		}
		return
	}
	fmt.Fprintf(a.ErrOut, "%s: %s, %s\n", rep.File, plural(len(rep.Errors), "error"), plural(len(rep.Warnings), "warning"))
}

// unreviewed says, for the ok line, which flows merge PRs no person
// reviewed: "; merged unreviewed: quick at accepted".
func unreviewed(ms []stages.UnreviewedMerge) string {
	if len(ms) == 0 {
		return ""
	}
	where := make([]string, len(ms))
	for i, m := range ms {
		where[i] = m.Flow + " at " + m.Node
	}
	return "; merged unreviewed: " + strings.Join(where, ", ")
}

// stepBackLine says where a bare step_back sends an issue: "`wait_for_ci`
// on_failure: step_back at pr_ready steps back to implement.feedback, the
// nearest earlier stage where an agent works".
func stepBackLine(r stages.StepBackRoute, rep ValidateReport) string {
	why := "the nearest earlier stage where an agent works"
	if r.Declared {
		why = "the on_failure.step_back_to declared there or before it"
	}
	flow := ""
	if len(rep.Flows) > 1 {
		flow = " (flow `" + r.Flow + "`)"
	}
	return fmt.Sprintf("`%s` %s: step_back at %s%s steps back to %s, %s", r.Hook, r.Policy, r.Node, flow, r.To, why)
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// validateReport loads the config and reports what was found, problems
// included; err is for a config that could not be read at all.
func (a cmds) validateReport() (ValidateReport, error) {
	rep := ValidateReport{Errors: []stages.Diagnostic{}, Warnings: []stages.Diagnostic{}, Flows: []string{}, Diagnostics: []DiagnosticJSON{},
		Unreviewed: []stages.UnreviewedMerge{}, StepBacks: []stages.StepBackRoute{}}
	quiet := *a.App
	quiet.ErrOut = io.Discard // the warnings go into the report
	cfg, reg, err := quiet.LoadConfig()
	var le *stages.LoadError
	switch {
	case errors.As(err, &le):
		rep.File = a.ConfigPath
		for _, d := range le.Diagnostics {
			rep.File = d.Pos.File
			if d.Severity == stages.SevError {
				rep.Errors = append(rep.Errors, d)
			} else {
				rep.Warnings = append(rep.Warnings, d)
			}
		}
	case err != nil:
		return rep, err
	default:
		rep.File, rep.Valid, rep.Form, rep.Stages, rep.Flows = cfg.File, true, cfg.Form, len(cfg.Stages), cfg.FlowNames()
		rep.Warnings = append(rep.Warnings, cfg.Warnings...)
		// Only here: a pipeline that declares no end loads (as the earlier
		// tool's did), and every command but validate keeps quiet of it.
		rep.Warnings = append(rep.Warnings, load.Unending(cfg)...)
		rep.Unreviewed = append(rep.Unreviewed, cfg.UnreviewedMerges(stages.Approvals(reg))...)
		rep.StepBacks = append(rep.StepBacks, cfg.BareStepBacks()...)
	}
	all := append(slices.Clone(rep.Errors), rep.Warnings...)
	slices.SortStableFunc(all, func(x, y stages.Diagnostic) int {
		return cmp.Or(cmp.Compare(x.Pos.Line, y.Pos.Line), cmp.Compare(x.Pos.Col, y.Pos.Col))
	})
	for _, d := range all {
		rep.Diagnostics = append(rep.Diagnostics, DiagnosticJSON{File: d.Pos.File, Line: d.Pos.Line, Col: d.Pos.Col, Severity: d.Severity, Message: d.Msg, Hint: d.Hint})
	}
	return rep, nil
}
