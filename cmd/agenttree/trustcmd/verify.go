package trustcmd

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/spf13/cobra"

	"github.com/agenttree/agenttree/cmd/agenttree/cmdutil"
	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/forge/local"
	"github.com/agenttree/agenttree/internal/exitcode"
)

// VerifyOptions is what `verify` was asked.
type VerifyOptions struct {
	*cmdutil.App
	// IssueArg is the issue's id as given, "" for every issue and the
	// local forge's records.
	IssueArg string
	JSON     bool
}

// newCmdVerify checks issues, and the local forge's records, against
// their hash-chained logs.
func newCmdVerify(a *cmdutil.App, runF func(context.Context, *VerifyOptions) error) *cobra.Command {
	opts := &VerifyOptions{App: a}
	cmd := &cobra.Command{
		Use:   "verify [ID]",
		Short: "Check that issues and forge records were changed only by agenttree (their tamper-evident logs)",
		Example: `  agenttree verify
  agenttree verify 3 --json`,
		Long: "Check issue ID's (or every issue's) events.jsonl, a hash chain with one line per\n" +
			"write of issue.yaml, line by line, and issue.yaml against its last line. Say\n" +
			"what is wrong: a line changed, removed or reordered, or issue.yaml changed\n" +
			"outside agenttree, field by field. An issue whose directory was removed is\n" +
			"missing: ids are never given twice, and agenttree never removes one.\n\n" +
			"Without ID, also check every record of the local forge, its PR records and CI\n" +
			"results, against the log beside each (prs/N.chain.jsonl, checks/SHA.chain.jsonl).\n" +
			"Changes nothing.\n\n" +
			cmdutil.ExitStatus("0 everything checked is consistent, 1 something is not, "+cmdutil.ExitUsage),
		Args: cmdutil.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.IssueArg = args[0]
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return verifyRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the reports as JSON")
	return cmd
}

// args are the command's arguments, as verify takes them.
func (o *VerifyOptions) args() []string {
	if o.IssueArg == "" {
		return nil
	}
	return []string{o.IssueArg}
}

func verifyRun(ctx context.Context, opts *VerifyOptions) error {
	a := cmds{opts.App}
	out, err := a.verify(ctx, opts.args())
	if err != nil {
		return err
	}
	if opts.JSON {
		if err := a.PrintJSON(out); err != nil {
			return err
		}
	} else {
		a.printReports(out.Issues)
		a.printRecords(out.Forge)
	}
	if !out.OK {
		return cmdutil.SilentExit(exitcode.Blocked)
	}
	return nil
}

// verified is what verify found: every issue asked about, and, without
// an ID, every record of the local forge (nil with one).
type verified struct {
	OK     bool                 `json:"ok"`
	Issues []*issues.Report     `json:"issues"`
	Forge  []local.RecordReport `json:"forge,omitempty"`
}

// verify checks the issue args name, or every issue (those missing
// included) and every record of the local forge.
func (a cmds) verify(ctx context.Context, args []string) (*verified, error) {
	e, ids, err := a.verifyTargets(ctx, args)
	if err != nil {
		return nil, err
	}
	out := &verified{Issues: make([]*issues.Report, 0, len(ids))}
	for _, id := range ids {
		rep, err := e.Store.Verify(id)
		if err != nil {
			return nil, err
		}
		out.Issues = append(out.Issues, rep)
	}
	if len(args) == 0 {
		if out.Forge, err = local.Verify(e.Store.Root()); err != nil {
			return nil, fmt.Errorf("check the local forge's records: %w", err)
		}
		if out.Forge == nil {
			out.Forge = []local.RecordReport{}
		}
	}
	out.OK = allOK(out.Issues) && recordsOK(out.Forge)
	return out, nil
}

// verifyTargets opens the engine and lists the issues args name: the one
// given, or all, those whose directory is missing among them.
func (a cmds) verifyTargets(ctx context.Context, args []string) (*engine.Engine, []int, error) {
	if len(args) == 1 {
		e, id, err := a.EngineFor(ctx, args[0])
		return e, []int{id}, err
	}
	e, err := a.Engine(ctx)
	if err != nil {
		return nil, nil, err
	}
	ids, err := e.Store.IDs()
	if err != nil {
		return nil, nil, err
	}
	missing, err := e.Store.Missing(ids)
	if err != nil {
		return nil, nil, err
	}
	return e, slices.Sorted(slices.Values(append(ids, missing...))), nil
}

func allOK(reports []*issues.Report) bool {
	for _, r := range reports {
		if !r.OK {
			return false
		}
	}
	return true
}

func recordsOK(reports []local.RecordReport) bool {
	for _, r := range reports {
		if !r.OK {
			return false
		}
	}
	return true
}

func (a cmds) printReports(reports []*issues.Report) {
	bad, missing := 0, 0
	for _, r := range reports {
		switch {
		case r.OK:
			fmt.Fprintf(a.Out, "issue %d: ok (%d events, version %d)\n", r.ID, r.Lines, r.Version)
		case r.Missing:
			missing++
			fmt.Fprintf(a.Out, "issue %d: MISSING\n", r.ID)
		default:
			bad++
			fmt.Fprintf(a.Out, "issue %d: CHANGED OUTSIDE AGENTTREE\n", r.ID)
		}
		for _, p := range r.Problems {
			fmt.Fprintf(a.Out, "  %s\n", cmdutil.SafeText(p))
		}
		for _, c := range r.Changes {
			fmt.Fprintf(a.Out, "    %s\n", cmdutil.SafeText(c))
		}
		for _, n := range r.Notes {
			fmt.Fprintf(a.Out, "  note: %s\n", cmdutil.SafeText(n))
		}
		if !r.OK && !r.Missing {
			fmt.Fprintf(a.Out, "  a person restores its last consistent state with `agenttree repair %d`\n", r.ID)
		}
	}
	if len(reports) > 1 {
		fmt.Fprintf(a.Out, "%d issues: %d consistent, %d changed outside agenttree", len(reports), len(reports)-bad-missing, bad)
		if missing > 0 {
			fmt.Fprintf(a.Out, ", %d missing", missing)
		}
		fmt.Fprintln(a.Out)
	}
}

// printRecords prints what verify found of the local forge's records,
// one line each, then the problems of those that are not consistent.
func (a cmds) printRecords(reports []local.RecordReport) {
	if len(reports) == 0 {
		return
	}
	bad := 0
	for _, r := range reports {
		if r.OK {
			fmt.Fprintf(a.Out, "%s: ok (%d versions)\n", cmdutil.SafeText(r.Record), r.Versions)
		} else {
			bad++
			fmt.Fprintf(a.Out, "%s: CHANGED OUTSIDE AGENTTREE (%s)\n", cmdutil.SafeText(r.Record), cmdutil.SafeText(r.Path))
		}
		for _, p := range r.Problems {
			fmt.Fprintf(a.Out, "  %s\n", cmdutil.SafeText(p))
		}
		for _, c := range r.Changes {
			fmt.Fprintf(a.Out, "    %s\n", cmdutil.SafeText(c))
		}
		for _, n := range r.Notes {
			fmt.Fprintf(a.Out, "  note: %s\n", cmdutil.SafeText(n))
		}
		if !r.OK {
			fmt.Fprintf(a.Out, "  %s\n", cmdutil.SafeText(r.Fix))
		}
	}
	fmt.Fprintf(a.Out, "%d forge records: %d consistent, %d changed outside agenttree\n", len(reports), len(reports)-bad, bad)
}

// RepairOptions is what `repair` was asked.
type RepairOptions struct {
	*cmdutil.App
	// IssueArg is the issue's id as given.
	IssueArg string
	// Adopt starts a new chain from issue.yaml as it is.
	Adopt, JSON bool
}

// newCmdRepair restores an issue from its log (people only).
func newCmdRepair(a *cmdutil.App, runF func(context.Context, *RepairOptions) error) *cobra.Command {
	opts := &RepairOptions{App: a}
	cmd := &cobra.Command{
		Use:   "repair ID",
		Short: "Restore an issue changed outside agenttree to the last consistent state its log holds (people only)",
		Example: `  agenttree repair 3
  agenttree repair 3 --adopt   # start afresh from issue.yaml as it is`,
		Long: "Restore issue ID's issue.yaml to the last consistent state its events.jsonl\n" +
			"holds. The log stays append-only: lines after its last good one are moved to\n" +
			"events.set-aside.jsonl beside it, and a repair line records what was undone.\n" +
			"An issue that needs no repair is left as it is.\n\n" +
			"With --adopt, when the log holds nothing to restore, a new chain starts from\n" +
			"issue.yaml as it is (look at it first); the old log is set aside the same way.\n\n" +
			cmdutil.ExitStatus("0 repaired or nothing to repair, 1 nothing to restore from", cmdutil.ExitUsage+", "+cmdutil.ExitOnlyPerson),
		Args: cmdutil.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.IssueArg = args[0]
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return repairRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.Adopt, "adopt", false, "start a new chain from issue.yaml as it is (when the log holds nothing to restore)")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print what was done as JSON")
	return cmd
}

func repairRun(ctx context.Context, opts *RepairOptions) error {
	a := cmds{opts.App}
	if err := a.mayRepair(); err != nil {
		return err
	}
	e, id, err := a.EngineFor(ctx, opts.IssueArg)
	if err != nil {
		return err
	}
	done, err := e.Store.Repair(ctx, id, opts.Adopt)
	if errors.Is(err, issues.ErrNothingToRestore) {
		return &cmdutil.ExitError{Code: exitcode.Blocked, Err: err}
	}
	if err != nil {
		return err
	}
	if opts.JSON {
		return a.PrintJSON(done)
	}
	a.printRepaired(done)
	return nil
}

// mayRepair refuses anyone but a person: a repair decides which state of
// an issue is the true one.
func (a cmds) mayRepair() error {
	return a.ForPeople("repair is for people, and this is %s: a person looks at `agenttree verify` and repairs")
}

func (a cmds) printRepaired(d *issues.Repaired) {
	switch d.Action {
	case issues.RepairNone:
		fmt.Fprintf(a.Out, "issue %d: nothing to repair, it is consistent (version %d)\n", d.ID, d.Version)
	case issues.RepairFinished:
		fmt.Fprintf(a.Out, "issue %d: finished what a crash had interrupted (version %d); nothing was changed outside agenttree\n", d.ID, d.Version)
	case issues.RepairRestored:
		fmt.Fprintf(a.Out, "issue %d: restored the state of version %d, as version %d\n", d.ID, d.Restored, d.Version)
	case issues.RepairAdopted:
		fmt.Fprintf(a.Out, "issue %d: adopted issue.yaml as it is (version %d): a new chain starts from it\n", d.ID, d.Version)
	}
	for _, p := range d.Problems {
		fmt.Fprintf(a.Out, "  it was: %s\n", cmdutil.SafeText(p))
	}
	for _, u := range d.Undone {
		fmt.Fprintf(a.Out, "  undid: %s\n", cmdutil.SafeText(u))
	}
	if d.SetAside != "" {
		fmt.Fprintf(a.Out, "  set aside: %d line(s) of events.jsonl, kept in %s\n", d.SetAsideLines, d.SetAside)
	}
}
