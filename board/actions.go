package board

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/engine/people"
	"github.com/agenttree/agenttree/engine/report"
	"github.com/agenttree/agenttree/internal/textsafe"
	"github.com/agenttree/agenttree/stages"
)

// actionFunc is one of people's commands, given the form's values.
type actionFunc func(ctx context.Context, e *engine.Engine, id int, actor engine.Actor, form func(string) string) (*engine.Result, error)

// actionsByName are the board's actions: each the engine's entry point
// the CLI's command of the same name calls (flowcmd), with the same
// values: a reason for resume, skip, abort and move, a message (and a
// stage) for reject.
var actionsByName = map[string]actionFunc{
	"approve": func(ctx context.Context, e *engine.Engine, id int, actor engine.Actor, _ func(string) string) (*engine.Result, error) {
		return e.Approve(ctx, id, actor, false)
	},
	"reject": func(ctx context.Context, e *engine.Engine, id int, actor engine.Actor, form func(string) string) (*engine.Result, error) {
		return people.Reject(ctx, e, id, actor, form("to"), form("message"))
	},
	"resume": func(ctx context.Context, e *engine.Engine, id int, actor engine.Actor, form func(string) string) (*engine.Result, error) {
		return people.Resume(ctx, e, id, actor, form("reason"))
	},
	"skip": func(ctx context.Context, e *engine.Engine, id int, actor engine.Actor, form func(string) string) (*engine.Result, error) {
		return people.Skip(ctx, e, id, actor, form("reason"))
	},
	"abort": func(ctx context.Context, e *engine.Engine, id int, actor engine.Actor, form func(string) string) (*engine.Result, error) {
		return people.Abort(ctx, e, id, actor, form("reason"))
	},
	"move": func(ctx context.Context, e *engine.Engine, id int, actor engine.Actor, form func(string) string) (*engine.Result, error) {
		return people.Move(ctx, e, id, actor, form("stage"), form("reason"))
	},
}

// resultView is what an action answers: the engine's result as the CLI
// prints it, or its refusal.
type resultView struct {
	ID     int
	Action string
	// OK: the action did what it was asked (exit status 0 in the CLI).
	OK   bool
	Text string
}

// action runs one of people's commands on the path's issue, as the
// board's person, and answers what the engine said: the text the CLI
// prints (report.Printer), 200 when it did what was asked, 409 when the
// engine refused or a gate stopped it, 400 for a bad request. It is
// cancelled once stop is done.
func (s *Server) action(stop context.Context, w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r)
	if err != nil {
		s.failed(w, err)
		return
	}
	name := r.PathValue("action")
	do, ok := actionsByName[name]
	if !ok {
		s.failed(w, badRequest{errUnknownAction(name)})
		return
	}
	e, err := s.Engine()
	if err != nil {
		s.failed(w, err)
		return
	}
	s.Log.Info("board action", "issue", id, "action", name, "actor", s.Actor.String())
	// The action is finished though the person's browser goes away, as
	// the controller's socket finishes an agent's (docs/ARCHITECTURE.md
	// §11): a half-done approve, move or hook helps nobody. The engine's
	// own timeouts (hooks', locks') bound it; the board's stop cancels it
	// through the engine and waits for it (Serve). Its answer gets a
	// write timeout of its own from when it is ready.
	ctx, cancel := context.WithCancel(context.WithoutCancel(r.Context()))
	defer cancel()
	defer context.AfterFunc(stop, cancel)()
	res, err := do(ctx, e, id, s.Actor, func(k string) string { return strings.TrimSpace(r.PostFormValue(k)) })
	_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(s.limits.write))
	v := resultView{ID: id, Action: name}
	status := http.StatusOK
	// What the engine answers quotes agents' text (gates' output, hook
	// failures): as text, without their terminal controls.
	if err != nil {
		v.Text, status = textsafe.Sanitize(err.Error()), http.StatusConflict
	} else {
		v.Text, v.OK = textsafe.Sanitize(resultText(res)), report.Code(res) == 0
		if !v.OK {
			status = http.StatusConflict
		}
	}
	if r.Header.Get("HX-Request") == "true" {
		s.render(w, status, "result", v)
		return
	}
	s.render(w, status, "layout", page{Title: "agenttree board", Token: s.token, CSRF: s.csrf(), Body: "result", Data: v})
}

// resultText is res as the CLI prints it for a person (flowcmd's byHand:
// a resume says where the issue goes on, not a move).
func resultText(res *engine.Result) string {
	var out, errOut bytes.Buffer
	p := report.Printer{Out: &out, ErrOut: &errOut}
	if res.Status == engine.StatusAdvanced && res.Kind == stages.MoveResume {
		out.WriteString("issue " + itoa(res.Issue) + " resumed at " + res.From + "\n")
		p.Lines("  ", res.Reasons)
	} else {
		p.Result(res)
	}
	return strings.TrimRight(errOut.String()+out.String(), "\n")
}
