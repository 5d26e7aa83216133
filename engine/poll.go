package engine

import (
	"context"
	"errors"
	"fmt"

	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/engine/prhead"
	"github.com/agenttree/agenttree/engine/transition"
	"github.com/agenttree/agenttree/hooks"
)

// ErrNoPR is returned when the issue has no pull request to wait for.
var ErrNoPR = errors.New("no pull request")

// PollCI polls the CI of issue id's PR once: it runs, under the issue's
// lock, the hook whose spec says it waits for CI — the issue's stage's own
// entry of it when there is one (so its timeouts and reruns apply), else
// with the config's ci_polling — and keeps what the hook learned (watch
// state, feedback, the verified head). It returns the outcome and the issue
// as the poll left it; deciding when to poll again is the caller's.
func (e *Engine) PollCI(ctx context.Context, id int) (hooks.Outcome, *issues.Issue, error) {
	tx, iss, err := e.Store.Begin(ctx, id)
	if err != nil {
		return hooks.Outcome{}, nil, err
	}
	defer tx.Unlock()
	if iss.PRNumber == 0 {
		return hooks.Outcome{}, nil, fmt.Errorf("issue %d: %w yet; it gets one on entering a stage that opens one (run `agenttree next` to get there)", id, ErrNoPR)
	}
	entry, err := prhead.WaitEntry(e.Hooks, e.Config, iss)
	if err != nil {
		return hooks.Outcome{}, nil, err
	}
	node, _ := e.Config.Node(iss.Stage)
	o, iss := transition.New(ctx, e.deps, tx, Actor{Kind: ActorHuman}, false, nil).Poll(iss, entry, node)
	return o, iss, nil
}
