package ghapi

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// User is a GitHub account as the REST API names it. A deleted account
// comes as null: Login "".
type User struct {
	Login string `json:"login"`
}

// Comment is a comment on a PR's conversation (an issue comment).
type Comment struct {
	ID        int64     `json:"id"`
	Body      string    `json:"body"`
	User      User      `json:"user"`
	HTMLURL   string    `json:"html_url"`
	CreatedAt time.Time `json:"created_at"`
}

// PullReview is a submitted review as the REST API lists it. Its verdict
// alone is in PullRequest.Reviews; this is what the reviewer wrote.
type PullReview struct {
	ID   int64  `json:"id"`
	User User   `json:"user"`
	Body string `json:"body"`
	// State is APPROVED, CHANGES_REQUESTED, COMMENTED, DISMISSED or
	// PENDING (the viewer's own unsubmitted review).
	State    string `json:"state"`
	HTMLURL  string `json:"html_url"`
	CommitID string `json:"commit_id"`
	// SubmittedAt is nil while the review is pending.
	SubmittedAt *time.Time `json:"submitted_at"`
}

// ReviewThread is a review thread: comments on one line of a PR's diff.
type ReviewThread struct {
	// ID is the thread's GraphQL node id (PRRT_...).
	ID         string
	IsResolved bool
	Path       string
	// Line is the line of the diff the thread is on; 0 when GitHub has
	// none, as for an outdated thread.
	Line int
	// Comments are its first threadComments comments, oldest first;
	// MoreComments counts the ones after them.
	Comments     []ThreadComment
	MoreComments int
}

// ThreadComment is one comment of a review thread.
type ThreadComment struct {
	// Author is a login; "" for a deleted account.
	Author    string
	Body      string
	URL       string
	CreatedAt time.Time
}

// Comments reads every comment of PR number's conversation, oldest first.
func (c *Client) Comments(ctx context.Context, number int) ([]Comment, error) {
	op := fmt.Sprintf("github: reading the comments of PR #%d", number)
	return listAll[Comment](ctx, c, op, c.path("issues/%d/comments", number))
}

// PullReviews reads every review of PR number, in the order they were
// submitted.
func (c *Client) PullReviews(ctx context.Context, number int) ([]PullReview, error) {
	op := fmt.Sprintf("github: reading the reviews of PR #%d", number)
	return listAll[PullReview](ctx, c, op, c.path("pulls/%d/reviews", number))
}

// threadComments is how many comments of each review thread ReviewThreads
// reads: a thread longer than that is a conversation to read on GitHub.
const threadComments = 50

// reviewThreadsQuery is built on first use, as every query here: a
// process that never asks GitHub pays nothing for them when it starts.
var reviewThreadsQuery = sync.OnceValue(func() string {
	return fmt.Sprintf(`query ReviewThreads($owner: String!, $name: String!, $number: Int!, $after: String) {
  repository(owner: $owner, name: $name) {
    pullRequest(number: $number) {
      reviewThreads(first: %d, after: $after) {
        pageInfo { hasNextPage endCursor }
        nodes {
          id isResolved path line
          comments(first: %d) { totalCount nodes { author { login } body url createdAt } }
        }
      }
    }
  }
}`, perPage, threadComments)
})

// ReviewThreads reads every review thread of PR number, resolved or not,
// oldest first: one GraphQL request per hundred threads. REST has the
// threads' comments but not whether a thread is resolved.
func (c *Client) ReviewThreads(ctx context.Context, number int) ([]ReviewThread, error) {
	op := fmt.Sprintf("github: reading the review threads of PR #%d", number)
	var threads []ReviewThread
	var after *string
	for range maxPages {
		page, err := c.reviewThreadPage(ctx, op, number, after)
		if err != nil {
			return nil, err
		}
		for _, n := range page.Nodes {
			threads = append(threads, n.thread())
		}
		if !page.PageInfo.HasNextPage {
			break
		}
		after = &page.PageInfo.EndCursor
	}
	return threads, nil
}

func (c *Client) reviewThreadPage(ctx context.Context, op string, number int, after *string) (*gqlThreadPage, error) {
	var resp struct {
		Repository *struct {
			PullRequest *struct {
				ReviewThreads gqlThreadPage `json:"reviewThreads"`
			} `json:"pullRequest"`
		} `json:"repository"`
	}
	vars := map[string]any{"owner": c.repo.Owner, "name": c.repo.Name, "number": number, "after": after}
	if err := c.query(ctx, reviewThreadsQuery(), vars, &resp); err != nil {
		return nil, c.classify(op, err)
	}
	if resp.Repository == nil || resp.Repository.PullRequest == nil {
		return nil, fmt.Errorf("%s: %w: no such PR in %s", op, ErrNotFound, c.repo.FullName())
	}
	return &resp.Repository.PullRequest.ReviewThreads, nil
}

// gqlThreadPage is the answer to reviewThreadsQuery.
type gqlThreadPage struct {
	PageInfo struct {
		HasNextPage bool   `json:"hasNextPage"`
		EndCursor   string `json:"endCursor"`
	} `json:"pageInfo"`
	Nodes []gqlThread `json:"nodes"`
}

type gqlThread struct {
	ID         string `json:"id"`
	IsResolved bool   `json:"isResolved"`
	Path       string `json:"path"`
	Line       *int   `json:"line"`
	Comments   struct {
		TotalCount int `json:"totalCount"`
		Nodes      []struct {
			Author    *User     `json:"author"`
			Body      string    `json:"body"`
			URL       string    `json:"url"`
			CreatedAt time.Time `json:"createdAt"`
		} `json:"nodes"`
	} `json:"comments"`
}

func (g gqlThread) thread() ReviewThread {
	t := ReviewThread{ID: g.ID, IsResolved: g.IsResolved, Path: g.Path,
		MoreComments: max(g.Comments.TotalCount-len(g.Comments.Nodes), 0)}
	if g.Line != nil {
		t.Line = *g.Line
	}
	for _, n := range g.Comments.Nodes {
		tc := ThreadComment{Body: n.Body, URL: n.URL, CreatedAt: n.CreatedAt}
		if n.Author != nil {
			tc.Author = n.Author.Login
		}
		t.Comments = append(t.Comments, tc)
	}
	return t
}
