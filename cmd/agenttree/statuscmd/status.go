package statuscmd

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/agenttree/agenttree/cmd/agenttree/cmdutil"
	"github.com/agenttree/agenttree/controller"
	"github.com/agenttree/agenttree/controller/api"
	"github.com/agenttree/agenttree/controller/ratelimit"
	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/engine/machine/render"
	"github.com/agenttree/agenttree/engine/report"
	"github.com/agenttree/agenttree/internal/parallel"
	"github.com/agenttree/agenttree/internal/textsafe"
	"github.com/agenttree/agenttree/sessions/waiton"
	"github.com/agenttree/agenttree/stages"
)

// Row is one issue in `agenttree status`.
type Row struct {
	ID    int    `json:"id"`
	Title string `json:"title"`
	Stage string `json:"stage"`
	Owner string `json:"owner"`
	Next  string `json:"next"`
	// Unfinished: the stage's entry hooks have not all passed.
	Unfinished bool `json:"unfinished,omitempty"`
	// WaitingOn says in words what moves the issue on from here, and
	// WaitingFor who: a person, an agent, the controller, or nobody.
	WaitingOn  string             `json:"waiting_on"`
	WaitingFor Waiter             `json:"waiting_for,omitempty"`
	Escalated  *issues.Escalation `json:"escalated,omitempty"`
	Attempts   map[string]int     `json:"attempts,omitempty"`
	Breaker    *issues.Breaker    `json:"breaker,omitempty"`
	// BreakerWarning says, while the breaker is half-open, what closes
	// and what opens it.
	BreakerWarning string `json:"breaker_warning,omitempty"`
	// Resolve are the commands that let an escalated issue go on.
	Resolve []string `json:"resolve,omitempty"`
	// Error is why the issue's issue.yaml could not be read.
	Error string `json:"error,omitempty"`
	// Missing: the issue's directory was removed outside agenttree
	// (issues.MissingError); Error says so.
	Missing bool `json:"missing,omitempty"`

	// wait is WaitingOn with its clock, for people.
	wait waiton.Waiting
	// budgets are an escalated issue's step backs against their budgets.
	budgets []BudgetUse
}

// StatusOptions is what `status` was asked.
type StatusOptions struct {
	*cmdutil.App
	// IssueArg is the issue's id as given, "" for every issue.
	IssueArg string
	// Block shows the issue as one status block.
	Block, JSON bool
}

func newCmdStatus(a *cmdutil.App, runF func(context.Context, *StatusOptions) error) *cobra.Command {
	opts := &StatusOptions{App: a}
	cmd := &cobra.Command{
		Use:   "status [ID]",
		Short: "Show where issues are and what each waits on, escalated ones first",
		Long: "Without ID, list the issues by stage, in pipeline order, with what each waits on;\n" +
			"escalated issues come first, with the reason, the attempts made and the commands\n" +
			"that resolve them. With ID, show that issue; with --block, as one status block\n" +
			"(checks, circuit breaker, budgets, latest action, what to run next).",
		Example: "  agenttree status\n  agenttree status 3 --block\n  agenttree status --json",
		Args:    cmdutil.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.IssueArg = args[0]
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return statusRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print as JSON")
	cmd.Flags().BoolVar(&opts.Block, "block", false, "with ID: one structured status block")
	return cmd
}

func statusRun(ctx context.Context, opts *StatusOptions) error {
	a := cmds{opts.App}
	if opts.Block && opts.IssueArg == "" {
		return errors.New("--block shows one issue: `agenttree status ID --block`")
	}
	if c, err := a.Remote(); err != nil {
		return err
	} else if c != nil {
		req := api.StatusRequest{Block: opts.Block, JSON: opts.JSON}
		if opts.IssueArg != "" {
			if req.Issue, err = cmdutil.ParseID(opts.IssueArg); err != nil {
				return err
			}
		}
		var ans Answer
		if err := a.AskResult(ctx, c, api.RouteStatus, req, &ans); err != nil {
			return err
		}
		return a.printAnswer(&ans, opts.JSON)
	}
	if opts.IssueArg != "" {
		return a.statusOne(ctx, opts.IssueArg, opts.Block, opts.JSON)
	}
	e, err := a.Engine(ctx)
	if err != nil {
		return err
	}
	// A one-shot reader of every issue: collecting garbage as it goes
	// costs a quarter of its time at 10,000 issues, for memory the
	// process hands back when it exits. The collector starts only past
	// the limit, so a larger store stays bounded.
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(statusMemoryLimit))
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	rows, err := statusRows(ctx, e)
	if err != nil {
		return err
	}
	if opts.JSON {
		return a.PrintJSON(rows)
	}
	if err := a.printStatus(rows, time.Now()); err != nil {
		return err
	}
	// What the controller last saw of the forge's limits: status asks
	// the forge nothing.
	if rl, limited := ratelimit.Read(e.Store.Root(), time.Now()); limited {
		fmt.Fprintf(a.Out, "\nrate-limited until %s (%s): requests to the forge wait until then\n", rl.Until.Local().Format(time.TimeOnly), rl.Resource)
	}
	if !e.Config.Sandbox.Enforced() {
		fmt.Fprintln(a.Out, "\nagents run as this user: the rules hold their commands, not the files (advisory; see `agenttree doctor`)")
	}
	elected, err := a.electedController(ctx, e)
	if elected != "" {
		fmt.Fprintf(a.Out, "\nthe controller elected over etcd: %s\n", textsafe.Line(elected, 200))
	}
	a.printNodes(ctx, e, rows)
	// Elected on any host, or running on this one (its lock); not known
	// (the election unread) is not said to be missing.
	if _, local := controller.Running(e.Store.Root()); !local && elected == "" && err == nil && needsController(rows) {
		fmt.Fprintln(a.Out, "\nno controller is running for this repository: the issues waiting on it stay where they are until `agenttree controller` runs")
	}
	return nil
}

// statusMemoryLimit is the heap `status` grows to before it collects
// garbage (10,000 issues take about 75 MB without collecting).
const statusMemoryLimit = 256 << 20

// statusRows reads every issue into a row: escalated ones first, then by
// stage in pipeline order. An issue that cannot be read is a row saying
// why, never a failure of the whole list; so is one whose directory was
// removed (issues.Store.Missing), or whose files were (emptied).
func statusRows(ctx context.Context, e *engine.Engine) ([]Row, error) {
	listed, err := e.Store.Scan()
	if err != nil {
		return nil, fmt.Errorf("list the issues in %s: %w", e.Store.Root(), err)
	}
	present := make([]int, len(listed))
	for i, l := range listed {
		present[i] = l.ID
	}
	missing, err := e.Store.Missing(present)
	if err != nil {
		return nil, fmt.Errorf("list the issues in %s: %w", e.Store.Root(), err)
	}
	// Each row is worked out on its own (the config is only read), so on
	// every CPU: with thousands of issues this is a third of status.
	agents := waiton.LookAtAgents(ctx, e)
	rows := make([]Row, len(listed), len(listed)+len(missing))
	parallel.For(len(listed), func(i int) { rows[i] = rowOf(e, listed[i], agents) })
	for _, id := range missing {
		rows = append(rows, missingRow(e, id))
	}
	for _, id := range emptied(e, listed, missing, time.Now()) {
		rows = append(rows, emptiedRow(e, id))
	}
	return sortRows(rows, stageRanks(e.Config)), nil
}

// missingRow is the row of issue id, whose directory is gone.
func missingRow(e *engine.Engine, id int) Row {
	me := &issues.MissingError{ID: id, Dir: e.Store.HostDir(id)}
	w := waiton.Waiting{Who: WaiterPerson, What: fmt.Sprintf("a person: its directory was removed outside agenttree (`agenttree verify %d`)", id)}
	return Row{ID: id, Missing: true, Error: "missing: " + me.Problem(), WaitingOn: w.What, WaitingFor: w.Who, wait: w}
}

// rowOf is the status row of one listed issue.
func rowOf(e *engine.Engine, l issues.Listed, agents *waiton.Look) Row {
	if l.Err != nil {
		w := waiton.Waiting{Who: WaiterPerson, What: fmt.Sprintf("a person: its state is damaged (`agenttree verify %d`, `agenttree repair %d`)", l.ID, l.ID)}
		return Row{ID: l.ID, Error: l.Err.Error(), WaitingOn: w.What, WaitingFor: w.Who, wait: w}
	}
	var poll *issues.Poll
	if l.Watch != nil {
		poll = l.Watch.Poll
	}
	return statusOf(e, l.Issue, poll, agents)
}

// watchPoll is the controller's polling state of issue id, nil when there
// is none or watch.yaml cannot be read (the controller starts afresh then).
func watchPoll(e *engine.Engine, id int) *issues.Poll {
	w, err := e.Store.ReadWatch(id)
	if err != nil {
		return nil
	}
	return w.Poll
}

// statusOf is where iss is, who acts there, what it waits on and where
// `next` would take it.
func statusOf(e *engine.Engine, iss *issues.Issue, poll *issues.Poll, agents *waiton.Look) Row {
	w := waiton.On(e.Config, iss, poll, agents)
	row := Row{ID: iss.ID, Title: iss.Title, Stage: iss.Stage, Unfinished: iss.EntryPending != nil,
		WaitingOn: w.What, WaitingFor: w.Who, Escalated: iss.Escalated, Attempts: iss.Attempts, Breaker: iss.Breaker, wait: w}
	if iss.Escalated != nil {
		row.Resolve = w.Run
		row.budgets = budgets(e.Config, iss)
	}
	row.BreakerWarning = breakerWarning(e.Config, iss)
	n, ok := e.Config.Node(iss.Stage)
	if !ok {
		return row
	}
	row.Owner = render.Describe(n)
	flow, err := e.Config.Flow(iss.Flow)
	if err != nil || n.Terminal() != stages.TerminalNone {
		return row
	}
	if to, _, err := flow.Next(n.Path, e.Snapshot(iss).CondVars()); err == nil && to != nil {
		row.Next = to.Path
	}
	return row
}

// statusOne shows one issue: in full, or as a status block.
func (a cmds) statusOne(ctx context.Context, arg string, block, asJSON bool) error {
	e, id, err := a.EngineFor(ctx, arg)
	if err != nil {
		return err
	}
	iss, err := e.Store.Get(id)
	if err != nil {
		return err
	}
	if block {
		return a.statusBlock(ctx, e, iss, asJSON)
	}
	row := statusOf(e, iss, watchPoll(e, id), waiton.LookAtAgent(ctx, e, id))
	if asJSON {
		return a.PrintJSON(row)
	}
	a.printOne(report.Show(e, iss), row, time.Now())
	return nil
}

// printStatus prints the escalated issues, each with its ways out, then a
// table of the others, through a buffer: thousands of rows are written in
// a few writes, not one per cell. On a terminal, the table is cut to its
// width (fitColumns).
func (a cmds) printStatus(rows []Row, now time.Time) error {
	w := bufio.NewWriter(a.Out)
	if err := writeStatus(w, rows, now, terminalWidth(a.Out, a.Getenv)); err != nil {
		return err
	}
	return w.Flush()
}

// writeStatus writes rows as printStatus prints them, the table at most
// width runes wide (0: as wide as its cells).
func writeStatus(w io.Writer, rows []Row, now time.Time, width int) error {
	if len(rows) == 0 {
		fmt.Fprintln(w, "no issues; create one with `agenttree issue create TITLE`")
		return nil
	}
	n := 0
	for n < len(rows) && rows[n].Escalated != nil {
		n++
	}
	if n > 0 {
		fmt.Fprintf(w, "ESCALATED: %d waiting for a person\n", n)
		for _, r := range rows[:n] {
			printEscalated(w, r)
		}
		if n == len(rows) {
			return nil
		}
		fmt.Fprintln(w)
	}
	// The cells are made on every CPU (sanitising the stored text is most
	// of the work), then fitted and laid out in order.
	table := rows[n:]
	cells := make([][]string, len(table)+1)
	cells[0] = []string{"ID", "STAGE", "WHO ACTS", "WAITING ON", "NEXT", "TITLE"}
	parallel.For(len(table), func(i int) { cells[i+1] = tableCells(table[i], now) })
	fitColumns(cells, tableGap, width)
	tw := tabwriter.NewWriter(w, 0, 4, tableGap, ' ', 0)
	for _, row := range cells {
		io.WriteString(tw, strings.Join(row, "\t")+"\n")
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, r := range rows[n:] {
		if r.Error != "" {
			fmt.Fprintf(w, "issue %d: %s\n", r.ID, cmdutil.SafeText(r.Error))
		}
		if r.BreakerWarning != "" {
			fmt.Fprintf(w, "issue %d: %s\n", r.ID, r.BreakerWarning)
		}
	}
	return nil
}

// tableCells are r's cells in the status table, each one line: what it
// waits on is cut only by the safety bound of stored text (SafeText).
func tableCells(r Row, now time.Time) []string {
	stage := r.Stage
	if r.Unfinished {
		stage += " (unfinished)"
	}
	switch {
	case r.Missing:
		stage = "missing"
	case r.Error != "":
		stage = "?"
	}
	return []string{strconv.Itoa(r.ID), cmdutil.SafeText(stage), r.Owner, cmdutil.SafeText(r.wait.Text(now)), r.Next, cmdutil.SafeTitle(r.Title)}
}

func printEscalated(w io.Writer, r Row) {
	esc := r.Escalated
	fmt.Fprintf(w, "  #%d %s, at %s since %s (%s)\n", r.ID, cmdutil.SafeTitle(r.Title), cmdutil.SafeText(r.Stage), esc.At.Local().Format(time.DateTime), cmdutil.SafeText(string(esc.Kind)))
	fmt.Fprintf(w, "      why:      %s\n", cmdutil.SafeText(esc.Reason))
	if used := usedBudgets(r.budgets); len(used) > 0 {
		fmt.Fprintf(w, "      attempts: %s\n", cmdutil.SafeText(budgetsText(used)))
	} else if len(r.Attempts) > 0 {
		fmt.Fprintf(w, "      attempts: %s\n", cmdutil.SafeText(attemptsText(r.Attempts)))
	}
	if b := r.Breaker; b != nil {
		fmt.Fprintf(w, "      breaker:  %s\n", cmdutil.SafeText(breakerText(*b)))
	}
	for i, way := range waiton.WaysOut {
		label := "resolve:"
		if i > 0 {
			label = ""
		}
		fmt.Fprintf(w, "      %-9s `%s`  %s\n", label, way.Command(r.ID), way.Does)
	}
}

// ResolveCommands are the ways out of issue id's escalation.
func ResolveCommands(id int) []string { return waiton.ResolveCommands(id) }

// usedBudgets are the budgets of list that were drawn on or spent.
func usedBudgets(list []BudgetUse) []BudgetUse {
	var out []BudgetUse
	for _, u := range list {
		if u.Used > 0 || u.Escalated {
			out = append(out, u)
		}
	}
	return out
}

// attemptsText is the step backs per failure kind, in a stable order.
func attemptsText(attempts map[string]int) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(attempts)) {
		parts = append(parts, fmt.Sprintf("%s %d", k, attempts[k]))
	}
	return strings.Join(parts, ", ")
}

func breakerText(b issues.Breaker) string {
	return fmt.Sprintf("%s (no progress %d, same error %d)", cmp.Or(b.State, issues.BreakerClosed), b.NoProgress, b.SameError)
}

// Waiter is who an issue waits on.
type Waiter = waiton.Waiter

const (
	WaiterPerson     = waiton.WaiterPerson
	WaiterAgent      = waiton.WaiterAgent
	WaiterController = waiton.WaiterController
	WaiterNobody     = waiton.WaiterNobody
)

// needsController reports whether any issue waits on the controller.
func needsController(rows []Row) bool {
	for _, r := range rows {
		if r.WaitingFor == "controller" {
			return true
		}
	}
	return false
}

// electedController is who leads the controllers over etcd, "" over files
// or when none does; an error when the election cannot be read.
func (a cmds) electedController(ctx context.Context, e *engine.Engine) (string, error) {
	if e.Config.State.Backend != stages.StateEtcd {
		return "", nil
	}
	return a.EtcdLeader(ctx, e.Config)
}
