package local

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/agenttree/agenttree/forge"
)

var _ forge.ReviewFeed = (*Forge)(nil)

// Comment is a comment on a PR's conversation, or in a review thread.
type Comment struct {
	// ID numbers a conversation's comments from 1; a thread's comments
	// have none.
	ID   int       `yaml:"id,omitempty"`
	By   string    `yaml:"by,omitempty"`
	Body string    `yaml:"body"`
	At   time.Time `yaml:"at"`
}

// Thread is a review thread: comments on a line of one of the PR's files,
// open until someone resolves it.
type Thread struct {
	// ID numbers a PR's threads from 1.
	ID   int    `yaml:"id"`
	Path string `yaml:"path"`
	// Line is 0 for a comment on the whole file.
	Line       int       `yaml:"line,omitempty"`
	Resolved   bool      `yaml:"resolved,omitempty"`
	ResolvedBy string    `yaml:"resolved_by,omitempty"`
	ResolvedAt time.Time `yaml:"resolved_at,omitempty"`
	// Comments are the thread's, oldest first; the first one started it.
	Comments []Comment `yaml:"comments"`
}

// NewThread asks for a review thread.
type NewThread struct {
	Path string
	Line int
	// By is who starts it; empty: the person running agenttree.
	By   string
	Body string
}

// upgrade gives the comments of a record written before comments had ids
// and authors the id of their place and their author, agenttree, the only
// writer of comments then.
func (rec *Record) upgrade() {
	for i := range rec.Comments {
		c := &rec.Comments[i]
		if c.ID == 0 {
			c.ID, c.By = i+1, cmp.Or(c.By, botName)
		}
	}
}

// addComment adds by's comment to the conversation and returns its id.
func (rec *Record) addComment(by, body string) int {
	id := 1
	for _, c := range rec.Comments {
		id = max(id, c.ID+1)
	}
	rec.Comments = append(rec.Comments, Comment{ID: id, By: by, Body: body, At: now()})
	return id
}

// thread finds review thread id.
func (rec *Record) thread(id int) (*Thread, error) {
	for i := range rec.Threads {
		if rec.Threads[i].ID == id {
			return &rec.Threads[i], nil
		}
	}
	return nil, fmt.Errorf("local PR #%d has no review thread %d (%w)", rec.Number, id, forge.ErrNotFound)
}

// feedbackMark is the PR's forge.FeedbackMark: the counts of its comments
// and of its review threads.
func feedbackMark(rec *Record) string {
	return fmt.Sprintf("%d/%d", len(rec.Comments), len(rec.Threads))
}

// Comment adds agenttree's comment to PR number.
func (f *Forge) Comment(ctx context.Context, number int, body string) error {
	f.requests.Add(1)
	_, err := f.AddComment(ctx, number, botName, body)
	return err
}

// AddComment adds by's comment (by empty: the person running agenttree)
// to PR number's conversation and returns its id.
func (f *Forge) AddComment(ctx context.Context, number int, by, body string) (id int, err error) {
	if strings.TrimSpace(body) == "" {
		return 0, fmt.Errorf("local PR #%d: empty comment", number)
	}
	err = f.update(ctx, number, func(rec *Record) error {
		id = rec.addComment(person(by), body)
		return nil
	})
	return id, err
}

// AddThread starts a review thread on PR number and returns its id.
func (f *Forge) AddThread(ctx context.Context, number int, t NewThread) (id int, err error) {
	switch {
	case strings.TrimSpace(t.Body) == "":
		return 0, fmt.Errorf("local PR #%d: a review thread needs a first comment", number)
	case t.Path == "":
		return 0, fmt.Errorf("local PR #%d: a review thread needs the file it is about", number)
	case t.Line < 0:
		return 0, fmt.Errorf("local PR #%d: review thread on %s: line %d; lines count from 1", number, t.Path, t.Line)
	}
	err = f.update(ctx, number, func(rec *Record) error {
		id = 1
		for _, th := range rec.Threads {
			id = max(id, th.ID+1)
		}
		rec.Threads = append(rec.Threads, Thread{ID: id, Path: t.Path, Line: t.Line,
			Comments: []Comment{{By: person(t.By), Body: t.Body, At: now()}}})
		return nil
	})
	return id, err
}

// ReplyToThread adds by's comment to review thread id of PR number. A
// resolved thread stays resolved, as on GitHub.
func (f *Forge) ReplyToThread(ctx context.Context, number, id int, by, body string) error {
	if strings.TrimSpace(body) == "" {
		return fmt.Errorf("local PR #%d: empty reply to review thread %d", number, id)
	}
	return f.update(ctx, number, func(rec *Record) error {
		th, err := rec.thread(id)
		if err != nil {
			return err
		}
		th.Comments = append(th.Comments, Comment{By: person(by), Body: body, At: now()})
		return nil
	})
}

// ResolveThread marks review thread id of PR number resolved by by, which
// takes it out of Feedback. Resolving a resolved thread does nothing.
func (f *Forge) ResolveThread(ctx context.Context, number, id int, by string) error {
	err := f.update(ctx, number, func(rec *Record) error {
		th, err := rec.thread(id)
		switch {
		case err != nil:
			return err
		case th.Resolved:
			return errUnchanged
		}
		th.Resolved, th.ResolvedBy, th.ResolvedAt = true, person(by), now()
		return nil
	})
	if errors.Is(err, errUnchanged) {
		return nil
	}
	return err
}

// Feedback lists PR number's conversation comments and its unresolved
// review threads, oldest first. The local forge's reviews are approvals,
// which say nothing more.
func (f *Forge) Feedback(ctx context.Context, number int) ([]forge.Feedback, error) {
	f.requests.Add(1)
	rec, err := f.read(number)
	if err != nil {
		return nil, err
	}
	out := make([]forge.Feedback, 0, len(rec.Comments)+len(rec.Threads))
	for _, c := range rec.Comments {
		id := strconv.Itoa(c.ID)
		out = append(out, forge.Feedback{ID: forge.FeedbackComment.ID(id), Kind: forge.FeedbackComment,
			Author: c.By, Body: c.Body, URL: f.URL(number) + "/comment/" + id, At: c.At})
	}
	for _, th := range rec.Threads {
		if th.Resolved || len(th.Comments) == 0 {
			continue
		}
		id := strconv.Itoa(th.ID)
		fb := forge.Feedback{ID: forge.FeedbackThread.ID(id), Kind: forge.FeedbackThread, Author: th.Comments[0].By,
			Path: th.Path, Line: th.Line, URL: f.URL(number) + "/thread/" + id}
		for _, c := range th.Comments {
			fb.AddThreadComment(c.By, c.Body, c.At)
		}
		out = append(out, fb)
	}
	forge.SortFeedback(out)
	return out, nil
}
