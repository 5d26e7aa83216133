// Package prwatch watches the PR of an issue at a stage the controller
// does not drive itself: a merge or a close outside agenttree settles the
// issue, a push under a person's review goes back through CI, and what
// reviewers write is forwarded to the agent once each. The controller's
// tick says when to look (docs/ARCHITECTURE.md §6); this package is what
// one look does.
package prwatch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/engine/outbox"
	"github.com/agenttree/agenttree/forge"
	"github.com/agenttree/agenttree/stages"
)

// Due is an issue whose PR is looked at, as the controller's tick read it.
type Due struct {
	Issue *issues.Issue
	// Node is the stage the issue is at.
	Node *stages.Node
	// Poll is its polling state; nil: never polled.
	Poll *issues.Poll
}

// Missed looks alone at the PR of d, which the forge left out of the
// tick's batch: on the local forge, one whose record (or its head's CI
// result) was changed outside agenttree, which stops the issue for a
// person, as it does when a hook meets it. Any other answer is a PR the
// forge does not report: nothing to watch.
func Missed(ctx context.Context, e *engine.Engine, d Due) (*engine.Result, error) {
	_, err := e.Forge.PR(ctx, d.Issue.PRNumber)
	if !errors.Is(err, forge.ErrTampered) {
		return nil, nil
	}
	why := err.Error()
	var te *forge.TamperedError
	if errors.As(err, &te) {
		why = te.Escalation(d.Issue.ID)
	}
	return e.Escalate(ctx, d.Issue.ID, issues.EscalatedTampered, fmt.Sprintf("watching PR #%d: %s", d.Issue.PRNumber, why))
}

// Watch looks at the PR of an issue an agent or a person works on: a PR
// merged outside agenttree completes the issue, one closed abandons it,
// and what reviewers wrote is forwarded to the agent, once each. It also
// says how many review comments and threads were new. now is the clock
// that stamps the polling state's log, read when the entry is written
// (after the poll's hooks, which may take minutes).
func Watch(ctx context.Context, e *engine.Engine, d Due, pr *forge.PR, now func() time.Time) (*engine.Result, int, error) {
	if pr == nil {
		return nil, 0, nil
	}
	switch pr.State {
	case forge.StateMerged:
		res, err := e.Settle(ctx, d.Issue.ID, stages.TerminalCompletion, fmt.Sprintf("PR #%d was merged outside agenttree", pr.Number))
		return res, 0, err
	case forge.StateClosed:
		res, err := e.Settle(ctx, d.Issue.ID, stages.TerminalAbandon, fmt.Sprintf("PR #%d was closed without merging", pr.Number))
		return res, 0, err
	}
	if d.Node.HumanReview() {
		// A push while a person reviews goes back through CI.
		if res, err := e.ReviewHead(ctx, d.Issue.ID, pr.HeadSHA); err != nil || res != nil {
			return res, 0, err
		}
	}
	var res *engine.Result
	if e.Watcher(d.Node) != nil {
		var err error
		if res, err = e.WatchPR(ctx, d.Issue.ID); err != nil {
			return nil, 0, err
		}
	}
	n, err := forwardFeedback(ctx, e, d, pr, now)
	return res, n, err
}

// NewFeedback lists what reviewers said on the PR since the last poll, at
// a stage that forwards nothing (a controller stage): the ids of the
// comments and threads neither forwarded nor counted before. The forge is
// asked only when the PR's feedback mark moved. The list is for the poll's
// line; a failure to read it is no failure of the pass, only logged.
func NewFeedback(ctx context.Context, e *engine.Engine, d Due, pr *forge.PR, log *slog.Logger) []string {
	feed, ok := forge.As[forge.ReviewFeed](e.Forge)
	if !ok || pr == nil || pr.FeedbackMark == "" || d.Poll == nil || d.Poll.ReviewMark == "" || d.Poll.ReviewMark == pr.FeedbackMark {
		return nil
	}
	items, err := feed.Feedback(ctx, pr.Number)
	if err != nil {
		log.Debug("reading review feedback", "issue", d.Issue.ID, "pr", pr.Number, "err", err)
		return nil
	}
	var fresh []string
	for _, f := range items {
		if !slices.Contains(d.Poll.Handled, f.ID) && !slices.Contains(d.Poll.Noted, f.ID) {
			fresh = append(fresh, f.ID)
		}
	}
	return fresh
}

// forwardFeedback puts what reviewers wrote on the PR since the last look
// in the agent's outbox, and says how many it put. Each comment and thread
// is keyed by its id, so it is queued once whatever crashes; the handled
// ids are kept in watch.yaml.
func forwardFeedback(ctx context.Context, e *engine.Engine, d Due, pr *forge.PR, now func() time.Time) (int, error) {
	feed, ok := forge.As[forge.ReviewFeed](e.Forge)
	if !ok || (pr.FeedbackMark != "" && d.Poll != nil && d.Poll.FeedbackMark == pr.FeedbackMark) {
		return 0, nil // nothing new said since the last look
	}
	items, err := feed.Feedback(ctx, pr.Number)
	if err != nil {
		return 0, fmt.Errorf("reading review feedback of PR #%d: %w", pr.Number, err)
	}
	var handled []string
	if d.Poll != nil {
		handled = d.Poll.Handled
	}
	box := e.Outbox(d.Issue.ID)
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
		text += "\n" + feedbackAdvice(d.Node)
		if _, err := box.Put(ctx, outbox.Message{Key: "review-" + f.ID, To: outbox.ToAgent, Kind: "review", Text: text}); err != nil {
			return 0, err
		}
		fresh = append(fresh, f.ID)
	}
	return len(fresh), markHandled(ctx, e, d.Issue.ID, fresh, pr.FeedbackMark, now)
}

// markHandled keeps the feedback ids forwarded and the mark they were read at.
func markHandled(ctx context.Context, e *engine.Engine, id int, ids []string, mark string, now func() time.Time) error {
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
		next.Log(now(), fmt.Sprintf("forwarded %d review comment(s)", len(ids)))
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
