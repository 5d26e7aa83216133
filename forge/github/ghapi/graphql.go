package ghapi

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cli/go-gh/v2/pkg/api"
)

// PRBatchSize is how many PRs one GraphQL request asks for. Each PR costs
// about 123 nodes (the PR, its last commit, up to 100 rollup contexts, up
// to 20 reviews; the feedback counts read none), so 50 PRs stay near
// 6,000 nodes and 1 rate-limit point, far under the 500,000-node cap. The
// binding limit is GitHub's 10-second query timeout: a bigger batch of
// heavy rollups risks a 502 that loses the whole batch, a smaller one
// spends more requests per controller tick.
const PRBatchSize = 50

// rollupContexts is how many rollup contexts a batched query reads per PR.
// opinionatedReviews is how many reviewers' latest verdicts it reads.
const (
	rollupContexts     = 100
	opinionatedReviews = 20
)

// PullRequest is a PR as the batched GraphQL query reads it. Enum values
// are GitHub's GraphQL ones (OPEN, MERGEABLE, APPROVED, ...).
type PullRequest struct {
	Number      int
	URL         string
	Title       string
	HeadRefName string
	HeadRefOid  string
	BaseRefName string
	State       string // OPEN, CLOSED or MERGED
	IsDraft     bool
	Mergeable   string // MERGEABLE, CONFLICTING or UNKNOWN
	// ReviewDecision is APPROVED, CHANGES_REQUESTED, REVIEW_REQUIRED, or
	// "" where branch protection requires no review.
	ReviewDecision string
	// Reviews is each writer's latest approval or request for changes.
	Reviews []Review
	// CommentCount, ReviewCount and ThreadCount count the conversation's
	// comments, the reviews and the review threads (resolved or not):
	// each grows when someone says something new on the PR, so a caller
	// reads the feedback itself only then.
	CommentCount, ReviewCount, ThreadCount int

	// LastCommit is the newest commit GitHub has for the PR: HeadRefOid,
	// or for a moment after a push the one before it. "" if none.
	LastCommit string
	// CheckRuns and Statuses are LastCommit's status check rollup, in the
	// REST shape. ChecksTruncated says the rollup had more than the query
	// reads.
	CheckRuns       []CheckRun
	Statuses        []Status
	ChecksTruncated bool
}

// Review is a writer's review verdict.
type Review struct {
	State  string // APPROVED, CHANGES_REQUESTED, DISMISSED, ...
	Author string
	// Commit is the head the review was given on.
	Commit string
}

// prFragment is built on first use.
var prFragment = sync.OnceValue(func() string {
	return fmt.Sprintf(`
fragment prState on PullRequest {
  number url title headRefName headRefOid baseRefName state isDraft mergeable reviewDecision
  latestOpinionatedReviews(first: %d, writersOnly: true) { nodes { state author { login } commit { oid } } }
  comments { totalCount } reviews { totalCount } reviewThreads { totalCount }
  commits(last: 1) { nodes { commit { oid statusCheckRollup {
    contexts(first: %d) {
      totalCount
      pageInfo { hasNextPage }
      nodes {
        __typename
        ... on CheckRun { name status conclusion detailsUrl databaseId startedAt completedAt checkSuite { app { slug } } }
        ... on StatusContext { context state targetUrl createdAt }
      }
    }
  } } } }
}`, opinionatedReviews, rollupContexts)
})

// PullRequests reads many PRs, with one GraphQL request per PRBatchSize
// of them. Batches go one after another: GitHub's secondary limits punish
// concurrent requests from one user more than they reward them. Numbers
// that are not PRs are absent from the map.
func (c *Client) PullRequests(ctx context.Context, numbers []int) (map[int]*PullRequest, error) {
	nums := slices.Clone(numbers)
	slices.Sort(nums)
	nums = slices.Compact(nums)
	out := make(map[int]*PullRequest, len(nums))
	for batch := range slices.Chunk(nums, PRBatchSize) {
		if err := c.pullRequestBatch(ctx, batch, out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (c *Client) pullRequestBatch(ctx context.Context, numbers []int, out map[int]*PullRequest) error {
	var resp struct {
		Repository map[string]*gqlPR `json:"repository"`
	}
	vars := map[string]any{"owner": c.repo.Owner, "name": c.repo.Name}
	op := fmt.Sprintf("github: fetching %d PRs of %s", len(numbers), c.repo.FullName())
	if err := c.query(ctx, batchQuery(numbers), vars, &resp); err != nil && !onlyMissingPRs(err) {
		return c.classify(op, err)
	}
	if resp.Repository == nil {
		return fmt.Errorf("%s: %w: repository not found", op, ErrNotFound)
	}
	for i := range numbers {
		if g := resp.Repository["pr"+strconv.Itoa(i)]; g != nil {
			out[g.Number] = g.pullRequest()
		}
	}
	return nil
}

func batchQuery(numbers []int) string {
	var b strings.Builder
	b.WriteString("query PRStates($owner: String!, $name: String!) {\n  repository(owner: $owner, name: $name) {\n")
	for i, n := range numbers {
		fmt.Fprintf(&b, "    pr%d: pullRequest(number: %d) { ...prState }\n", i, n)
	}
	b.WriteString("  }\n}\n")
	b.WriteString(prFragment())
	return b.String()
}

// onlyMissingPRs reports whether every GraphQL error says a PR number does
// not exist, which PullRequests answers by leaving the number out.
func onlyMissingPRs(err error) bool {
	var ge *api.GraphQLError
	if !errors.As(err, &ge) || len(ge.Errors) == 0 {
		return false
	}
	for _, e := range ge.Errors {
		if e.Type != "NOT_FOUND" || len(e.Path) != 2 {
			return false
		}
	}
	return true
}

// gqlPR is the answer to prFragment.
type gqlPR struct {
	Number                   int     `json:"number"`
	URL                      string  `json:"url"`
	Title                    string  `json:"title"`
	HeadRefName              string  `json:"headRefName"`
	HeadRefOid               string  `json:"headRefOid"`
	BaseRefName              string  `json:"baseRefName"`
	State                    string  `json:"state"`
	IsDraft                  bool    `json:"isDraft"`
	Mergeable                string  `json:"mergeable"`
	ReviewDecision           *string `json:"reviewDecision"`
	LatestOpinionatedReviews struct {
		Nodes []struct {
			State  string `json:"state"`
			Author *struct {
				Login string `json:"login"`
			} `json:"author"`
			Commit *struct {
				Oid string `json:"oid"`
			} `json:"commit"`
		} `json:"nodes"`
	} `json:"latestOpinionatedReviews"`
	Comments      totalCount `json:"comments"`
	Reviews       totalCount `json:"reviews"`
	ReviewThreads totalCount `json:"reviewThreads"`
	Commits       struct {
		Nodes []struct {
			Commit struct {
				Oid               string `json:"oid"`
				StatusCheckRollup *struct {
					Contexts struct {
						TotalCount int `json:"totalCount"`
						PageInfo   struct {
							HasNextPage bool `json:"hasNextPage"`
						} `json:"pageInfo"`
						Nodes []gqlContext `json:"nodes"`
					} `json:"contexts"`
				} `json:"statusCheckRollup"`
			} `json:"commit"`
		} `json:"nodes"`
	} `json:"commits"`
}

// totalCount is a connection of which only the size is read.
type totalCount struct {
	TotalCount int `json:"totalCount"`
}

// gqlContext is a rollup context: a CheckRun or a StatusContext.
type gqlContext struct {
	Typename    string     `json:"__typename"`
	Name        string     `json:"name"`
	Status      string     `json:"status"`
	Conclusion  *string    `json:"conclusion"`
	DetailsURL  string     `json:"detailsUrl"`
	DatabaseID  int64      `json:"databaseId"`
	StartedAt   *time.Time `json:"startedAt"`
	CompletedAt *time.Time `json:"completedAt"`
	CheckSuite  *struct {
		App *App `json:"app"`
	} `json:"checkSuite"`
	Context   string     `json:"context"`
	State     string     `json:"state"`
	TargetURL string     `json:"targetUrl"`
	CreatedAt *time.Time `json:"createdAt"`
}

func (g *gqlPR) pullRequest() *PullRequest {
	pr := &PullRequest{Number: g.Number, URL: g.URL, Title: g.Title,
		HeadRefName: g.HeadRefName, HeadRefOid: g.HeadRefOid, BaseRefName: g.BaseRefName,
		State: g.State, IsDraft: g.IsDraft, Mergeable: g.Mergeable,
		CommentCount: g.Comments.TotalCount, ReviewCount: g.Reviews.TotalCount, ThreadCount: g.ReviewThreads.TotalCount}
	if g.ReviewDecision != nil {
		pr.ReviewDecision = *g.ReviewDecision
	}
	for _, r := range g.LatestOpinionatedReviews.Nodes {
		rv := Review{State: r.State}
		if r.Author != nil {
			rv.Author = r.Author.Login
		}
		if r.Commit != nil {
			rv.Commit = r.Commit.Oid
		}
		pr.Reviews = append(pr.Reviews, rv)
	}
	if len(g.Commits.Nodes) == 0 {
		return pr
	}
	commit := g.Commits.Nodes[0].Commit
	pr.LastCommit = commit.Oid
	if commit.StatusCheckRollup == nil {
		return pr
	}
	ctxs := commit.StatusCheckRollup.Contexts
	pr.ChecksTruncated = ctxs.PageInfo.HasNextPage || len(ctxs.Nodes) < ctxs.TotalCount
	for _, n := range ctxs.Nodes {
		if n.Typename == "StatusContext" {
			pr.Statuses = append(pr.Statuses, n.status())
		} else {
			pr.CheckRuns = append(pr.CheckRuns, n.checkRun(commit.Oid))
		}
	}
	return pr
}

// checkRun is the context in the REST shape, GraphQL's enums lower-cased
// to REST's values.
func (n gqlContext) checkRun(sha string) CheckRun {
	r := CheckRun{ID: n.DatabaseID, HeadSHA: sha, Name: n.Name, Status: strings.ToLower(n.Status),
		DetailsURL: n.DetailsURL, StartedAt: n.StartedAt, CompletedAt: n.CompletedAt}
	if n.Conclusion != nil {
		conclusion := strings.ToLower(*n.Conclusion)
		r.Conclusion = &conclusion
	}
	if n.CheckSuite != nil {
		r.App = n.CheckSuite.App
	}
	return r
}

// status is the context in the REST shape. Every state of a status is a
// new status, so the time this one was posted is also when it last
// changed.
func (n gqlContext) status() Status {
	return Status{Context: n.Context, State: strings.ToLower(n.State), TargetURL: n.TargetURL,
		CreatedAt: n.CreatedAt, UpdatedAt: n.CreatedAt}
}
