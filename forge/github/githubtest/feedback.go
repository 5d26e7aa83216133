package githubtest

import (
	"cmp"
	"fmt"
	"net/http"
	"time"

	"github.com/agenttree/agenttree/forge/github/githubtest/internal/rest"
)

// Comment is a comment on a PR's conversation or in a review thread.
type Comment struct {
	// Author is a login; the token's user (octocat) when empty.
	Author string
	Body   string
}

// comment is a Comment as stored, with what GitHub gives it.
type comment struct {
	Comment
	id int64
	at time.Time
}

// AddComment adds a comment to a PR's conversation, as if c.Author had
// posted it, and returns its id.
func (r *Repo) AddComment(number int, c Comment) int64 {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	return r.addComment(r.mustPR(number), c).id
}

func (r *Repo) addComment(p *prState, c Comment) *comment {
	cm := r.newComment(c)
	p.comments = append(p.comments, cm)
	p.Comments = append(p.Comments, c.Body)
	return cm
}

func (r *Repo) newComment(c Comment) *comment {
	c.Author = cmp.Or(c.Author, viewer)
	return &comment{Comment: c, id: r.s.nextID(), at: r.s.now()}
}

func (s *Server) createComment(r *http.Request, repo *Repo, p *prState) rest.Reply {
	var in struct {
		Body string `json:"body"`
	}
	if rep := rest.Decode(r, &in); rep != nil {
		return *rep
	}
	if in.Body == "" {
		return rest.Validation("IssueComment", "body", "missing_field")
	}
	return rest.JSON(http.StatusCreated, commentJSON(r, repo, p, repo.addComment(p, Comment{Body: in.Body})))
}

// commentJSON follows GitHub's issue comment.
func commentJSON(r *http.Request, repo *Repo, p *prState, c *comment) map[string]any {
	return map[string]any{
		"id":                 c.id,
		"node_id":            fmt.Sprintf("IC_%d", c.id),
		"url":                fmt.Sprintf("%s/repos/%s/issues/comments/%d", rest.Base(r), repo.fullName(), c.id),
		"html_url":           fmt.Sprintf("%s/%s/pull/%d#issuecomment-%d", webURL, repo.fullName(), p.Number, c.id),
		"issue_url":          fmt.Sprintf("%s/repos/%s/issues/%d", rest.Base(r), repo.fullName(), p.Number),
		"body":               c.Body,
		"user":               map[string]any{"login": c.Author},
		"author_association": "MEMBER",
		"created_at":         rest.Time(c.at),
		"updated_at":         rest.Time(c.at),
	}
}

// listComments answers oldest first, paginated, as GitHub does.
func (s *Server) listComments(r *http.Request, repo *Repo, p *prState) rest.Reply {
	return rest.JSON(http.StatusOK, rest.Page(r, p.comments, func(c *comment) map[string]any { return commentJSON(r, repo, p, c) }))
}

// listReviews answers the submitted reviews in the order they came,
// paginated, as GitHub does.
func (s *Server) listReviews(r *http.Request, repo *Repo, p *prState) rest.Reply {
	return rest.JSON(http.StatusOK, rest.Page(r, p.Reviews, func(rv Review) map[string]any {
		association := "MEMBER"
		if rv.NoWriteAccess {
			association = "NONE"
		}
		return map[string]any{
			"id":                 rv.ID,
			"node_id":            fmt.Sprintf("PRR_%d", rv.ID),
			"user":               map[string]any{"login": rv.Author},
			"body":               rv.Body,
			"state":              rv.State,
			"html_url":           fmt.Sprintf("%s/%s/pull/%d#pullrequestreview-%d", webURL, repo.fullName(), p.Number, rv.ID),
			"pull_request_url":   fmt.Sprintf("%s/repos/%s/pulls/%d", rest.Base(r), repo.fullName(), p.Number),
			"submitted_at":       rest.Time(rv.SubmittedAt),
			"commit_id":          rv.CommitID,
			"author_association": association,
		}
	}))

}
