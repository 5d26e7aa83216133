package statuscmd

import (
	"context"
	"fmt"
	"time"

	"github.com/agenttree/agenttree/cmd/agenttree/cmdutil"
	"github.com/agenttree/agenttree/controller/api"
	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/engine/report"
	"github.com/agenttree/agenttree/sessions/waiton"
)

// Answer is the controller's answer to an agent's status (Answer), which
// the agent's CLI prints as a person's `status` prints it (printAnswer):
// every issue's row; or one issue, shown, with its row; or one issue's
// block. The rows and the block carry what they are printed with beside
// what --json prints of them.
type Answer struct {
	Rows  []wireRow     `json:"rows,omitempty"`
	Shown *report.Shown `json:"shown,omitempty"`
	Row   *wireRow      `json:"row,omitempty"`
	Block *wireBlock    `json:"block,omitempty"`
}

// wireRow is a Row with its clock and budgets, which --json leaves out.
type wireRow struct {
	Row
	Wait    waiton.Waiting `json:"wait"`
	Budgets []BudgetUse    `json:"budget_use,omitempty"`
}

func toWire(r Row) wireRow { return wireRow{Row: r, Wait: r.wait, Budgets: r.budgets} }

func (w wireRow) row() Row {
	r := w.Row
	r.wait, r.budgets = w.Wait, w.Budgets
	return r
}

// wireBlock is a Block with its clock.
type wireBlock struct {
	Block
	Wait waiton.Waiting `json:"wait"`
}

// AnswerOf is what the controller answers req with, over e's issues: what
// `status` prints, without what it adds about this host (the sandbox, a
// controller not running), which is the asker's to tell.
func AnswerOf(ctx context.Context, e *engine.Engine, req api.StatusRequest) (*Answer, error) {
	if req.Issue == 0 {
		rows, err := statusRows(ctx, e)
		if err != nil {
			return nil, err
		}
		ans := &Answer{Rows: make([]wireRow, len(rows))}
		for i, r := range rows {
			ans.Rows[i] = toWire(r)
		}
		return ans, nil
	}
	iss, err := e.Store.Get(req.Issue)
	if err != nil {
		return nil, err
	}
	if req.Block {
		b := blockOf(ctx, e, iss, time.Now())
		return &Answer{Block: &wireBlock{Block: b, Wait: b.wait}}, nil
	}
	row := toWire(statusOf(e, iss, watchPoll(e, iss.ID), waiton.LookAtAgent(ctx, e, iss.ID)))
	shown := report.Show(e, iss)
	return &Answer{Shown: &shown, Row: &row}, nil
}

// printAnswer prints the controller's answer as `status` prints what it
// reads itself.
func (a cmds) printAnswer(ans *Answer, asJSON bool) error {
	now := time.Now()
	switch {
	case ans.Block != nil:
		b := ans.Block.Block
		b.wait = ans.Block.Wait
		if asJSON {
			return a.PrintJSON(b)
		}
		a.printBlock(b, now)
	case ans.Row != nil && ans.Shown != nil:
		row := ans.Row.row()
		if asJSON {
			return a.PrintJSON(row)
		}
		a.printOne(*ans.Shown, row, now)
	case ans.Row != nil || ans.Shown != nil:
		return fmt.Errorf("the controller's answer to status holds half an issue: is it of another agenttree version? restart it (`agenttree controller`)")
	default:
		rows := make([]Row, len(ans.Rows))
		for i, r := range ans.Rows {
			rows[i] = r.row()
		}
		if asJSON {
			return a.PrintJSON(rows)
		}
		return a.printStatus(rows, now)
	}
	return nil
}

// printOne prints one issue as `status ID` does: as `issue show` does,
// then what it waits on and where `next` would take it.
func (a cmds) printOne(s report.Shown, row Row, now time.Time) {
	report.Printer{Out: a.Out, ErrOut: a.ErrOut}.Issue(s)
	fmt.Fprintf(a.Out, "  waiting: %s\n", cmdutil.SafeText(row.wait.Text(now)))
	if row.Next != "" {
		fmt.Fprintf(a.Out, "  next:    %s\n", row.Next)
	}
}
