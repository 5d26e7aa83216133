//go:build etcd

package main

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"strconv"

	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/forge/github/githubtest"
	"github.com/agenttree/agenttree/stages"
)

// agent is an issue's simulated agent, on the node its issue was given.
type agent struct {
	node   *node
	pushes int
}

// act runs one event.
func (w *world) act(ctx context.Context, e event) error {
	switch e.kind {
	case evWork:
		return w.work(ctx, e.id)
	case evCI:
		conclusion := "success"
		if e.fail {
			conclusion = "failure"
		}
		w.srv.CompleteCheckRun(e.run, conclusion)
		return nil
	case evApprove:
		return w.approve(ctx, e.id)
	case evCreate:
		return w.create(ctx)
	}
	return nil
}

// work is an agent's commit: it pushes its branch (a new head on the
// fake, whose CI starts at once) and runs `agenttree next` through its
// node, as an agent's next reaches the node's socket. A next that fails
// is asked again with the same request id, as the agent's client does:
// a retry of a move made is answered, not made again.
func (w *world) work(ctx context.Context, id int) error {
	w.mu.Lock()
	a := w.agents[id]
	w.mu.Unlock()
	if a == nil {
		return nil
	}
	iss, err := a.node.eng.Store.Get(id)
	if err != nil {
		return err
	}
	if iss.Stage != stageImplement {
		return nil // moved meanwhile: nothing to do
	}
	a.pushes++
	sha := fakeSHA(id, a.pushes)
	if pr, ok := w.srv.PR(iss.PRNumber); ok && iss.PRNumber > 0 && pr.State == "open" {
		w.srv.SetHead(iss.PRNumber, sha)
	} else {
		w.srv.SetBranch(iss.Branch, sha)
	}
	run := w.srv.AddCheckRun(sha, githubtest.CheckRun{Name: "test", Status: "in_progress"})
	w.schedule(w.pace(w.o.ci), event{kind: evCI, run: run, fail: w.chance(w.o.fail)})
	actor := engine.Actor{Kind: engine.ActorAgent, Role: stages.RoleDeveloper, Request: fmt.Sprintf("sim-%d-%d", id, a.pushes)}
	for try := 0; ; try++ {
		r, err := a.node.eng.Next(ctx, id, actor, false)
		if err == nil {
			if r.Status == engine.StatusDone {
				// A retry answered: the first try made the move.
				w.tally.move(id, stageImplement, stageReady, "agent")
			}
			w.made(r, "agent")
			if r.To != stageReady {
				w.tally.refused(id, "agent's next", r)
			}
			return nil
		}
		if try == 3 || ctx.Err() != nil {
			return fmt.Errorf("issue %d: the agent's next: %w", id, err)
		}
		w.tally.retry()
	}
}

// approve is a person approving the PR on the forge, then the issue
// (`agenttree approve`): the controller merges it at accepted.
func (w *world) approve(ctx context.Context, id int) error {
	iss, err := w.people.eng.Store.Get(id)
	if err != nil {
		return err
	}
	if iss.Stage != stageReview || iss.PRNumber == 0 {
		return nil
	}
	if pr, ok := w.srv.PR(iss.PRNumber); ok && pr.ReviewDecision != "APPROVED" {
		w.srv.AddReview(iss.PRNumber, githubtest.Review{Author: "reviewer", State: "APPROVED"})
		w.srv.SetReviewDecision(iss.PRNumber, "APPROVED")
	}
	r, err := w.people.eng.Approve(ctx, id, engine.Actor{Kind: engine.ActorHuman}, false)
	if err != nil {
		return fmt.Errorf("issue %d: approve: %w", id, err)
	}
	w.made(r, "human")
	if r.To != stageAccepted {
		// The approval's gate read the forge and got an error: the
		// person tries again a little later.
		w.tally.refused(id, "approve", r)
		w.schedule(w.pace(w.o.review/10), event{kind: evApprove, id: id})
		return nil
	}
	// Merged by the controller; a new issue keeps the open ones at
	// -issues.
	w.mu.Lock()
	delete(w.agents, id)
	w.mu.Unlock()
	w.schedule(0, event{kind: evCreate})
	return nil
}

// create is a person's `issue create`; a node is given it by the elected
// controller, and its agent starts then.
func (w *world) create(ctx context.Context) error {
	iss, err := w.people.eng.Create(ctx, engine.NewIssue{Title: "Simulated work " + strconv.Itoa(w.tally.created()+1)})
	if err != nil {
		return fmt.Errorf("issue create: %w", err)
	}
	w.tally.create(iss.ID)
	w.mu.Lock()
	w.waiting[iss.ID] = true
	w.mu.Unlock()
	return nil
}

// made records the move r made, by who: whatever it was, the tally
// compares every move with the logs.
func (w *world) made(r *engine.Result, who string) {
	if r == nil || r.From == r.To || r.Conflict {
		return
	}
	w.tally.move(r.Issue, r.From, r.To, who)
}

// fakeSHA is the head of issue id's push n.
func fakeSHA(id, n int) string {
	sum := sha1.Sum([]byte(fmt.Sprintf("sim#%d#%d", id, n)))
	return hex.EncodeToString(sum[:])
}
