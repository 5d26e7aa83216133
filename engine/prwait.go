package engine

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"time"

	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/hooks"
	"github.com/agenttree/agenttree/internal/atomicfile"
	"github.com/agenttree/agenttree/stages"
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

// ErrNoPR is returned when the issue has no pull request to wait for.
var ErrNoPR = errors.New("no pull request")

// WaitCI polls issue id's PR until its CI is done, calling phase after each
// poll. It uses the wait_for_ci entry of the issue's stage when there is
// one (so its timeouts and reruns apply), else the config's ci_polling.
// maxInterval caps the pause between polls (0: as the hook asks).
func (e *Engine) WaitCI(ctx context.Context, id int, maxInterval time.Duration, phase func(WaitPhase)) (*WaitOutcome, error) {
	iss, err := e.Store.Get(id)
	if err != nil {
		return nil, err
	}
	if iss.PRNumber == 0 {
		return nil, fmt.Errorf("issue %d: %w yet; it gets one at a stage with create_pr (or run `agenttree next` to get there)", id, ErrNoPR)
	}
	entry, err := e.waitEntry(iss)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	for i := 1; ; i++ {
		o, err := e.pollCI(ctx, id, entry)
		switch {
		case errors.Is(err, atomicfile.ErrLocked):
			// Another command is moving the issue: poll again later.
			o = hooks.Pending(0, "issue is busy in another agenttree process")
		case err != nil:
			return nil, err
		}
		if o.Kind != hooks.KindPending {
			return e.waitOutcome(id, o)
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

// waitOutcome is the verdict of a poll that is not pending.
func (e *Engine) waitOutcome(id int, o hooks.Outcome) (*WaitOutcome, error) {
	switch {
	case o.Kind == hooks.KindPass, o.Kind == hooks.KindSkipped:
		return &WaitOutcome{Passed: true, Reason: "CI passed on " + o.Outputs["head_sha"]}, nil
	case !o.AgentFixable():
		// Not a CI verdict: credentials, setup or an outage.
		return nil, fmt.Errorf("waiting for CI on issue %d: %s", id, o.Reason)
	}
	out := &WaitOutcome{TimedOut: o.Class == hooks.ClassPollingTimeout, Reason: o.Reason, Class: o.Class}
	// The document the hook wrote for the agent (ci_feedback.md).
	for _, name := range slices.Sorted(maps.Keys(o.Files)) {
		if o.Files[name] != "" {
			out.Feedback = filepath.Join(e.Store.Dir(id), name)
			break
		}
	}
	return out, nil
}

// pollCI makes one wait_for_ci poll under the issue's lock and keeps what
// it learned (watch state, feedback, the verified head).
func (e *Engine) pollCI(ctx context.Context, id int, entry *stages.HookEntry) (hooks.Outcome, error) {
	tx, err := e.Store.Lock(ctx, id)
	if err != nil {
		return hooks.Outcome{}, err
	}
	defer tx.Unlock()
	iss, err := tx.Get()
	if err != nil {
		return hooks.Outcome{}, err
	}
	t := &transition{e: e, ctx: ctx, tx: tx, actor: Actor{Kind: ActorHuman}}
	node, _ := e.Config.Node(iss.Stage)
	o := t.runHook(entry, t.snapshot(iss), node)
	if o.Kind == hooks.KindPass || o.Kind == hooks.KindFail {
		_, warn := t.save(iss, o.Outputs, nil)
		o.Warnings = append(o.Warnings, warn...)
	}
	return o, nil
}

// waitEntry is the hook entry `pr wait` polls: the issue's stage's own
// entry of the hook whose spec says it waits for CI (so its timeouts and
// reruns apply, but not its failure policy), else that hook with the
// config's ci_polling.
func (e *Engine) waitEntry(iss *issues.Issue) (*stages.HookEntry, error) {
	name, ok := e.hookWith(func(spec stages.HookSpec) bool { return spec.Waits })
	if !ok {
		return nil, errors.New("no hook waits for CI in this build of agenttree")
	}
	if node, ok := e.Config.Node(iss.Stage); ok {
		lists := [][]*stages.HookEntry{node.Stage.PostStart, node.Stage.PreCompletion}
		if node.Sub != nil {
			lists = append(lists, node.Sub.PostStart, node.Sub.PreCompletion)
		}
		for _, list := range lists {
			for _, h := range list {
				if h.Name == name {
					plain := *h
					plain.OnFailure, plain.When, plain.Optional = nil, nil, false
					return &plain, nil
				}
			}
		}
	}
	return &stages.HookEntry{Name: name, Params: map[string]any{}}, nil
}
