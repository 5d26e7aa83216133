package cmdutil

import (
	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/engine/report"
	"github.com/agenttree/agenttree/internal/exitcode"
)

// Report prints a transition result and turns its status into the exit code.
func (a *App) Report(res *engine.Result, asJSON bool) error {
	if asJSON {
		if err := a.PrintJSON(res); err != nil {
			return err
		}
	} else {
		a.PrintResult(res)
	}
	if code := ResultCode(res); code != exitcode.OK {
		return SilentExit(code)
	}
	return nil
}

// PrintResult prints res for people: the agent's CLI prints the
// controller's answer with the same report.Printer.
func (a *App) PrintResult(res *engine.Result) { a.printer().Result(res) }

// Lines prints each of list on a line of its own after prefix, safe for
// a terminal: reasons carry what hooks and agents wrote.
func (a *App) Lines(prefix string, list []string) { a.printer().Lines(prefix, list) }

func (a *App) printer() report.Printer {
	return report.Printer{Out: a.Out, ErrOut: a.ErrOut, Paint: a.Paint()}
}
