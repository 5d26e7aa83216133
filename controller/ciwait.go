// Package controller decides when the engine acts: it polls what agents
// cannot (CI), and moves issues along the stages the host controller owns.
package controller

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"time"

	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/hooks"
	"github.com/agenttree/agenttree/internal/atomicfile"
)

// WaitPhase is one poll of WaitCI, for printing.
type WaitPhase struct {
	Iteration int
	Elapsed   time.Duration
	Status    string // the poll's summary: what it is waiting for
	Next      time.Duration
}

// WaitOutcome is how WaitCI ended.
type WaitOutcome struct {
	Passed   bool        `json:"passed"`
	TimedOut bool        `json:"timed_out"`
	Reason   string      `json:"reason"`
	Class    hooks.Class `json:"class,omitempty"`
	// Feedback is the path of ci_feedback.md when CI failed.
	Feedback string `json:"feedback,omitempty"`
}

// WaitCI polls issue id's PR (engine.PollCI) until its CI is done, calling
// phase after each poll that is still waiting. The pause between polls is
// what the hook asks for, at most maxInterval (0: no cap).
func WaitCI(ctx context.Context, e *engine.Engine, id int, maxInterval time.Duration, phase func(WaitPhase)) (*WaitOutcome, error) {
	start := time.Now()
	for i := 1; ; i++ {
		o, polled, err := e.PollCI(ctx, id)
		switch {
		case errors.Is(err, atomicfile.ErrLocked):
			// Another command is moving the issue: poll again later.
			o = hooks.Pending(0, "issue is busy in another agenttree process")
		case err != nil:
			return nil, err
		}
		if o.Kind != hooks.KindPending {
			return waitOutcome(polled, e.Store.Dir(id), o)
		}
		wait := o.RetryAfter
		if wait <= 0 {
			wait = time.Second // never spin
		}
		if maxInterval > 0 && wait > maxInterval {
			wait = maxInterval
		}
		if phase != nil {
			phase(WaitPhase{Iteration: i, Elapsed: time.Since(start), Status: o.Reason, Next: wait})
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(wait):
		}
	}
}

// waitOutcome is the verdict of a poll that is not pending, on iss as
// the poll left it; dir is the issue's directory.
func waitOutcome(iss *issues.Issue, dir string, o hooks.Outcome) (*WaitOutcome, error) {
	switch {
	case o.Kind == hooks.KindPass, o.Kind == hooks.KindSkipped:
		return &WaitOutcome{Passed: true, Reason: "CI passed on " + iss.HeadSHA}, nil
	case !o.AgentFixable():
		// Not a CI verdict: credentials, setup or an outage.
		return nil, fmt.Errorf("waiting for CI on issue %d: %s", iss.ID, o.Reason)
	}
	out := &WaitOutcome{TimedOut: o.Class == hooks.ClassPollingTimeout, Reason: o.Reason, Class: o.Class}
	// The document the hook wrote for the agent (ci_feedback.md).
	for _, name := range slices.Sorted(maps.Keys(o.Files)) {
		if o.Files[name] != "" {
			out.Feedback = filepath.Join(dir, name)
			break
		}
	}
	return out, nil
}
