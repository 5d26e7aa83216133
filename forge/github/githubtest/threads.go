package githubtest

import (
	"fmt"

	"github.com/agenttree/agenttree/forge/github/githubtest/internal/gql"
	"github.com/agenttree/agenttree/forge/github/githubtest/internal/prquery"
	"github.com/agenttree/agenttree/forge/github/githubtest/internal/rest"
)

// Thread is a review thread: comments on one line of a PR's diff.
type Thread struct {
	Path string
	// Line is the line of the diff the thread is on; 0 answers null, as
	// GitHub does for an outdated thread.
	Line     int
	Resolved bool
	// Comments are the thread's comments, oldest first; the first one
	// starts the thread, so there must be one.
	Comments []Comment
}

// thread is a Thread as stored.
type thread struct {
	id       string // GraphQL node id: PRRT_...
	path     string
	line     int
	resolved bool
	comments []*comment
}

// AddThread starts a review thread on a PR and returns its node id.
func (r *Repo) AddThread(number int, t Thread) string {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	p := r.mustPR(number)
	if len(t.Comments) == 0 {
		panic(fmt.Sprintf("githubtest: a review thread on PR #%d needs a first comment", number))
	}
	th := &thread{id: fmt.Sprintf("PRRT_kwDO%d", r.s.nextID()), path: t.Path, line: t.Line, resolved: t.Resolved}
	for _, c := range t.Comments {
		th.comments = append(th.comments, r.newComment(c))
	}
	p.threads = append(p.threads, th)
	c := th.comments[0]
	r.hooks.ReviewComment(prRef(p), c.id, c.Body, c.Author)
	return th.id
}

// ReplyToThread adds a comment to a review thread.
func (r *Repo) ReplyToThread(number int, threadID string, c Comment) {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	th := r.mustThread(number, threadID)
	th.comments = append(th.comments, r.newComment(c))
	last := th.comments[len(th.comments)-1]
	r.hooks.ReviewComment(prRef(r.mustPR(number)), last.id, last.Body, last.Author)
}

// ResolveThread marks a review thread resolved, as a reviewer's "Resolve
// conversation" does.
func (r *Repo) ResolveThread(number int, threadID string) {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	r.mustThread(number, threadID).resolved = true
}

func (r *Repo) mustThread(number int, id string) *thread {
	for _, th := range r.mustPR(number).threads {
		if th.id == id {
			return th
		}
	}
	panic(fmt.Sprintf("githubtest: no review thread %s on PR #%d", id, number))
}

// reviewThreads is a PR's reviewThreads connection: the page q asks for.
func reviewThreads(repo *Repo, p *prState, q prquery.Query) map[string]any {
	return gql.Connection(p.threads, q.ThreadsAfter, q.Threads, func(th *thread) any {
		var line any
		if th.line > 0 {
			line = th.line
		}
		return map[string]any{
			"id":         th.id,
			"isResolved": th.resolved,
			"isOutdated": th.line == 0,
			"path":       th.path,
			"line":       line,
			"comments": gql.Connection(th.comments, "", q.ThreadComments, func(c *comment) any {
				return map[string]any{
					"author":    map[string]any{"login": c.Author},
					"body":      c.Body,
					"url":       fmt.Sprintf("%s/%s/pull/%d#discussion_r%d", webURL, repo.fullName(), p.Number, c.id),
					"createdAt": rest.Time(c.at),
				}
			}),
		}
	})
}
