package api

import (
	"context"
	"errors"
	"slices"

	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/engine/report"
	"github.com/agenttree/agenttree/internal/exitcode"
	"github.com/agenttree/agenttree/sessions"
)

// Agents answers an agent's `next`, `issue create`, `issue show` and
// `inbox` by calling the engine: the controller serves them as Handlers,
// and the agent's CLI renders what they return (Client.Do) with the code
// a person's CLI prints them with (engine/report).
type Agents struct {
	// Engine is the controller's engine, as of its config now.
	Engine func() (*engine.Engine, error)
}

// Next moves the issue of the caller's session on (a person's names it).
// The issue is read once, under its lock when nobody holds it (as a
// person's `next` does), and a retry of a request already carried out is
// told what it did, not applied again: the engine finds the request in
// the issue's history (Result.Done).
func (a Agents) Next(ctx context.Context, who Caller, req NextRequest) (*NextResult, error) {
	e, err := a.Engine()
	if err != nil {
		return nil, err
	}
	actor, id, err := who.Acting(req.Issue, true)
	if err != nil {
		return nil, err
	}
	if id <= 0 {
		return nil, errors.New("which issue? a person names it (`next -i ID`)")
	}
	tx, iss, err := e.Store.TryBegin(id)
	if err != nil {
		return nil, err
	}
	if tx != nil {
		defer tx.Unlock()
	} else if iss, err = e.Store.Get(id); err != nil {
		return nil, err
	}
	// An agent of another OS user commits in a clone of its own: its
	// work is taken in first, for the gates to see. A retry of a request
	// the issue as read already records (the controller moved it and died
	// before answering) changes nothing, so it takes nothing in either: a
	// clone gone or moved on since must not turn the answer into an
	// error. Whether it is a retry is the engine's to say, under the lock.
	if !recorded(iss, req.RequestID) {
		if err := sessions.New(e, nil).TakeWork(ctx, id); err != nil {
			return nil, err
		}
	}
	actor.Request = req.RequestID
	res, err := e.NextFrom(ctx, tx, iss, actor, req.DryRun)
	if err != nil {
		return nil, err
	}
	if d := res.Done; d != nil {
		return &NextResult{Done: &Done{Issue: res.Issue, From: d.Entry.From, To: d.Entry.To, Kind: d.Entry.Kind, Stage: d.Stage}}, nil
	}
	return &NextResult{Result: res}, nil
}

// recorded reports whether iss's history records the request id: history
// is only appended to, so a request found without the lock stands.
func recorded(iss *issues.Issue, request string) bool {
	return request != "" && slices.ContainsFunc(iss.History, func(h issues.HistoryEntry) bool { return h.Request == request })
}

// Create creates an issue, held to the config's agent_create rules.
func (a Agents) Create(ctx context.Context, who Caller, req CreateRequest) (*issues.Issue, error) {
	e, err := a.Engine()
	if err != nil {
		return nil, err
	}
	actor, _, err := who.Acting(0, true)
	if err != nil {
		return nil, err
	}
	return e.Create(ctx, engine.NewIssue{Title: req.Title, Flow: req.Flow, Labels: req.Labels, Vars: req.Vars, By: actor})
}

// Show reads an issue (req.Issue, else the caller's session's), as
// `issue show` prints it.
func (a Agents) Show(_ context.Context, who Caller, req ShowRequest) (*report.Shown, error) {
	e, err := a.Engine()
	if err != nil {
		return nil, err
	}
	_, id, err := who.Acting(req.Issue, false)
	if err != nil {
		return nil, err
	}
	if req.Issue != 0 {
		id = req.Issue
	}
	iss, err := e.Store.Get(id)
	if err != nil {
		return nil, err
	}
	s := report.Show(e, iss)
	return &s, nil
}

// Inbox reads the messages of the caller's session's issue.
func (a Agents) Inbox(_ context.Context, who Caller, req InboxRequest) (*report.Inbox, error) {
	e, err := a.Engine()
	if err != nil {
		return nil, err
	}
	_, id, err := who.Acting(0, false)
	if err != nil {
		return nil, err
	}
	if id <= 0 {
		return nil, errors.New("an inbox is an issue's: an agent reads its own session's")
	}
	if _, err := e.Store.Get(id); err != nil {
		return nil, err
	}
	v, err := report.ReadInbox(e.Outbox(id), id, req.Recent)
	if err != nil {
		return nil, err
	}
	return &v, nil
}

// Acting is who c acts as, and on which issue: an agent on its session's
// issue only (named, the issue a request that acts names, 0 for none,
// must be that one; a read, acts false, may name any), a person on the
// issue named.
func (c Caller) Acting(named int, acts bool) (engine.Actor, int, error) {
	switch {
	case c.Session != nil:
		s := c.Session
		if acts && named > 0 && named != s.Issue {
			return engine.Actor{}, 0, Refused(int(exitcode.Waiting), "this agent's session is for issue %d; issue %d is not its own", s.Issue, named)
		}
		return engine.Actor{Kind: engine.ActorAgent, Role: s.Role}, s.Issue, nil
	case c.Person:
		return engine.Actor{Kind: engine.ActorHuman}, named, nil
	}
	return engine.Actor{}, 0, Refused(int(exitcode.Waiting), "who is asking is not known")
}
