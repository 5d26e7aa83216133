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

	"github.com/agenttree/agenttree/controller/polling"
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
	// Iterations counts the polls; ElapsedS is the wait in whole seconds.
	Iterations int   `json:"iterations"`
	ElapsedS   int64 `json:"elapsed_s"`
}

// ForgeErrorsError ends WaitCI after polling.MaxForgeErrors polls in a row that
// could not talk to the forge: an outage is no CI verdict, and it is not
// waited out forever either.
type ForgeErrorsError struct {
	Issue, Errors int
	// Last is the last poll's reason.
	Last string
}

func (e *ForgeErrorsError) Error() string {
	return fmt.Sprintf("waiting for CI on issue %d: stopped after %d errors in a row talking to the forge (last: %s); this is no CI verdict: check the forge (`gh auth status`, its status page), then run `agenttree pr wait %d` again",
		e.Issue, e.Errors, e.Last, e.Issue)
}

// WaitCI polls issue id's PR (engine.PollCI) until its CI is done, calling
// phase after each poll that is still waiting. The pause between polls is
// what the hook asks for, at most maxInterval (0: no cap). Five polls in a
// row that could not talk to the forge end it with a *ForgeErrorsError.
func WaitCI(ctx context.Context, e *engine.Engine, id int, maxInterval time.Duration, phase func(WaitPhase)) (*WaitOutcome, error) {
	start := time.Now()
	forgeErrs := 0
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
			out, err := waitOutcome(polled, e.Store.Dir(id), o)
			if out != nil {
				out.Iterations, out.ElapsedS = i, int64(time.Since(start)/time.Second)
			}
			return out, err
		}
		if forgeWaiting(o.Class) {
			forgeErrs++
		} else {
			forgeErrs = 0
		}
		if forgeErrs >= polling.MaxForgeErrors {
			return nil, &ForgeErrorsError{Issue: id, Errors: forgeErrs, Last: o.Reason}
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

// forgeWaiting reports whether a pending poll of class is the forge's
// doing (an outage, a rate limit, a request that timed out), not CI's.
func forgeWaiting(class hooks.Class) bool {
	return class == hooks.ClassForge || class == hooks.ClassRateLimit || class == hooks.ClassTimeout
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
