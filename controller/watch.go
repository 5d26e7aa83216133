package controller

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/engine/outbox"
	"github.com/agenttree/agenttree/forge"
	"github.com/agenttree/agenttree/stages"
)

// missedPR looks alone at the PR of d, which the forge left out of the
// tick's batch: on the local forge, one whose record (or its head's CI
// result) was changed outside agenttree, which stops the issue for a
// person, as it does when a hook meets it. Any other answer is a PR the
// forge does not report: nothing to watch.
func (c *Controller) missedPR(ctx context.Context, e *engine.Engine, d dueIssue) (*engine.Result, error) {
	_, err := e.Forge.PR(ctx, d.iss.PRNumber)
	if !errors.Is(err, forge.ErrTampered) {
		return nil, nil
	}
	why := err.Error()
	var te *forge.TamperedError
	if errors.As(err, &te) {
		why = te.Escalation(d.iss.ID)
	}
	return e.Escalate(ctx, d.iss.ID, issues.EscalatedTampered, fmt.Sprintf("watching PR #%d: %s", d.iss.PRNumber, why))
}

// watchPR looks at the PR of an issue an agent or a person works on: a PR
// merged outside agenttree completes the issue, one closed abandons it,
// and what reviewers wrote is forwarded to the agent, once each. It also
// says how many review comments and threads were new.
func (c *Controller) watchPR(ctx context.Context, e *engine.Engine, d dueIssue, pr *forge.PR) (*engine.Result, int, error) {
	if pr == nil {
		return nil, 0, nil
	}
	switch pr.State {
	case forge.StateMerged:
		res, err := e.Settle(ctx, d.iss.ID, stages.TerminalCompletion, fmt.Sprintf("PR #%d was merged outside agenttree", pr.Number))
		return res, 0, err
	case forge.StateClosed:
		res, err := e.Settle(ctx, d.iss.ID, stages.TerminalAbandon, fmt.Sprintf("PR #%d was closed without merging", pr.Number))
		return res, 0, err
	}
	if d.node.HumanReview() {
		// A push while a person reviews goes back through CI.
		if res, err := e.ReviewHead(ctx, d.iss.ID, pr.HeadSHA); err != nil || res != nil {
			return res, 0, err
		}
	}
	var res *engine.Result
	if e.Watcher(d.node) != nil {
		var err error
		if res, err = e.WatchPR(ctx, d.iss.ID); err != nil {
			return nil, 0, err
		}
	}
	n, err := c.forwardFeedback(ctx, e, d, pr)
	return res, n, err
}

// newFeedback lists what reviewers said on the PR since the last poll, at
// a stage that forwards nothing (a controller stage): the ids of the
// comments and threads neither forwarded nor counted before. The forge is
// asked only when the PR's feedback mark moved. The list is for the poll's
// line; a failure to read it is no failure of the pass.
func (c *Controller) newFeedback(ctx context.Context, e *engine.Engine, d dueIssue, pr *forge.PR) []string {
	feed, ok := forge.As[forge.ReviewFeed](e.Forge)
	if !ok || pr == nil || pr.FeedbackMark == "" || d.poll == nil || d.poll.ReviewMark == "" || d.poll.ReviewMark == pr.FeedbackMark {
		return nil
	}
	items, err := feed.Feedback(ctx, pr.Number)
	if err != nil {
		c.log().Debug("reading review feedback", "issue", d.iss.ID, "pr", pr.Number, "err", err)
		return nil
	}
	var fresh []string
	for _, f := range items {
		if !slices.Contains(d.poll.Handled, f.ID) && !slices.Contains(d.poll.Noted, f.ID) {
			fresh = append(fresh, f.ID)
		}
	}
	return fresh
}

// forwardFeedback puts what reviewers wrote on the PR since the last look
// in the agent's outbox, and says how many it put. Each comment and thread
// is keyed by its id, so it is queued once whatever crashes; the handled
// ids are kept in watch.yaml.
func (c *Controller) forwardFeedback(ctx context.Context, e *engine.Engine, d dueIssue, pr *forge.PR) (int, error) {
	feed, ok := forge.As[forge.ReviewFeed](e.Forge)
	if !ok || (pr.FeedbackMark != "" && d.poll != nil && d.poll.FeedbackMark == pr.FeedbackMark) {
		return 0, nil // nothing new said since the last look
	}
	items, err := feed.Feedback(ctx, pr.Number)
	if err != nil {
		return 0, fmt.Errorf("reading review feedback of PR #%d: %w", pr.Number, err)
	}
	var handled []string
	if d.poll != nil {
		handled = d.poll.Handled
	}
	box := e.Outbox(d.iss.ID)
	var fresh []string
	for _, f := range items {
		if slices.Contains(handled, f.ID) {
			continue
		}
		text := fmt.Sprintf("review feedback on PR #%d from %s", pr.Number, f.Author)
		if f.Path != "" {
			text += fmt.Sprintf(" on %s:%d", f.Path, f.Line)
		}
		text += ":\n" + f.Body
		if f.URL != "" {
			text += "\n(" + f.URL + ")"
		}
		text += "\n" + feedbackAdvice(d.node)
		if _, err := box.Put(ctx, outbox.Message{Key: "review-" + f.ID, To: outbox.ToAgent, Kind: "review", Text: text}); err != nil {
			return 0, err
		}
		fresh = append(fresh, f.ID)
	}
	return len(fresh), c.markHandled(ctx, e, d.iss.ID, fresh, pr.FeedbackMark)
}

// markHandled keeps the feedback ids forwarded and the mark they were read at.
func (c *Controller) markHandled(ctx context.Context, e *engine.Engine, id int, ids []string, mark string) error {
	tx, _, err := e.Store.Begin(ctx, id)
	if err != nil {
		return err
	}
	defer tx.Unlock()
	p, err := tx.Poll()
	if err != nil {
		return err
	}
	var next issues.Poll
	if p != nil {
		next = *p
	}
	if len(ids) == 0 && next.FeedbackMark == mark {
		return nil
	}
	next.Handled = append(slices.Clone(next.Handled), ids...)
	next.FeedbackMark = mark
	if len(ids) > 0 {
		next.Log(c.now(), fmt.Sprintf("forwarded %d review comment(s)", len(ids)))
	}
	return tx.SetPoll(&next)
}

// feedbackAdvice is what the agent does about review feedback forwarded
// while the issue is at node.
func feedbackAdvice(node *stages.Node) string {
	if node.HumanReview() {
		return "The review is a person's: they decide, and `agenttree reject` sends the work back to you if it needs changes; do not push meanwhile."
	}
	return "Address it and commit, then run `agenttree next` when fixed."
}
