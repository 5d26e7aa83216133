package github

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cli/go-gh/v2/pkg/api"

	"github.com/agenttree/agenttree/forge"
)

// PRBatchSize is how many PRs one GraphQL request asks for. Each PR costs
// about 123 nodes (the PR, its last commit, up to 100 rollup contexts, up
// to 20 reviews), so 50 PRs stay near 6,000 nodes and 1 rate-limit point —
// far under the 500,000-node cap. The binding limit is GitHub's 10-second query timeout:
// a bigger batch of heavy rollups risks a 502 that loses the whole batch,
// a smaller one spends more requests per controller tick.
const PRBatchSize = 50

// rollupContexts is how many rollup contexts a batched query reads per PR.
// A PR with more is topped up from the REST check-runs API.
const rollupContexts = 100

// ErrHeadChanged: the PR's head moved while the client was looking at it.
var ErrHeadChanged = forge.ErrHeadChanged

var prFragment = fmt.Sprintf(`
fragment prState on PullRequest {
  number url title headRefName headRefOid baseRefName state isDraft mergeable reviewDecision
  latestOpinionatedReviews(first: %d, writersOnly: true) { nodes { state author { login } commit { oid } } }
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

// opinionatedReviews is how many reviewers' latest verdicts a batched
// query reads per PR to decide the review itself when GitHub does not.
const opinionatedReviews = 20

type gqlPR struct {
	Number         int     `json:"number"`
	URL            string  `json:"url"`
	Title          string  `json:"title"`
	HeadRefName    string  `json:"headRefName"`
	HeadRefOid     string  `json:"headRefOid"`
	BaseRefName    string  `json:"baseRefName"`
	State          string  `json:"state"`
	IsDraft        bool    `json:"isDraft"`
	Mergeable      string  `json:"mergeable"`
	ReviewDecision *string `json:"reviewDecision"`
	// LatestOpinionatedReviews is each writer's latest approval or request
	// for changes.
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
	Commits struct {
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

type gqlContext struct {
	Typename string `json:"__typename"`
	// CheckRun
	Name        string     `json:"name"`
	Status      string     `json:"status"`
	Conclusion  *string    `json:"conclusion"`
	DetailsURL  string     `json:"detailsUrl"`
	DatabaseID  int64      `json:"databaseId"`
	StartedAt   *time.Time `json:"startedAt"`
	CompletedAt *time.Time `json:"completedAt"`
	CheckSuite  *struct {
		App *struct {
			Slug string `json:"slug"`
		} `json:"app"`
	} `json:"checkSuite"`
	// StatusContext
	Context   string     `json:"context"`
	State     string     `json:"state"`
	TargetURL string     `json:"targetUrl"`
	CreatedAt *time.Time `json:"createdAt"`
}

// PRs fetches many PRs' state, checks of their head commits included, with
// one GraphQL request per PRBatchSize PRs. Batches go one after another:
// GitHub's secondary limits punish concurrent requests from one user more
// than they reward them. Numbers not found are absent from the map.
func (c *Client) PRs(ctx context.Context, numbers []int) (map[int]*forge.PR, error) {
	nums := slices.Clone(numbers)
	slices.Sort(nums)
	nums = slices.Compact(nums)
	out := make(map[int]*forge.PR, len(nums))
	for start := 0; start < len(nums); start += PRBatchSize {
		batch := nums[start:min(start+PRBatchSize, len(nums))]
		if err := c.fetchBatch(ctx, batch, out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func batchQuery(numbers []int) string {
	var b strings.Builder
	b.WriteString("query PRStates($owner: String!, $name: String!) {\n  repository(owner: $owner, name: $name) {\n")
	for i, n := range numbers {
		fmt.Fprintf(&b, "    pr%d: pullRequest(number: %d) { ...prState }\n", i, n)
	}
	b.WriteString("  }\n}\n")
	b.WriteString(prFragment)
	return b.String()
}

func (c *Client) fetchBatch(ctx context.Context, numbers []int, out map[int]*forge.PR) error {
	var resp struct {
		Repository map[string]*gqlPR `json:"repository"`
	}
	vars := map[string]any{"owner": c.repo.Owner, "name": c.repo.Name}
	op := fmt.Sprintf("github: fetching %d PRs of %s", len(numbers), c.repo.FullName())
	// A query changes nothing, so a 5xx may be retried.
	err := c.gql.DoWithContext(retryable(ctx), batchQuery(numbers), vars, &resp)
	if err != nil && !onlyMissingPRs(err) {
		return c.wrapErr(op, err)
	}
	if resp.Repository == nil {
		return fmt.Errorf("%s: %w: repository not found", op, forge.ErrNotFound)
	}
	for i := range numbers {
		g := resp.Repository["pr"+strconv.Itoa(i)]
		if g == nil {
			continue
		}
		pr, needREST := g.toForge()
		if needREST {
			checks, err := c.Checks(ctx, pr.HeadSHA)
			if err != nil {
				return err
			}
			pr.Checks = checks
		}
		out[pr.Number] = pr
	}
	return nil
}

// onlyMissingPRs reports whether every GraphQL error says a PR number does
// not exist, which PRs answers by leaving the number out.
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

// toForge maps a GraphQL PR. needREST says the rollup was cut short and the
// checks must be read from REST.
func (g *gqlPR) toForge() (*forge.PR, bool) {
	pr := &forge.PR{
		Number: g.Number, URL: g.URL, Title: g.Title,
		Branch: g.HeadRefName, Base: g.BaseRefName, HeadSHA: g.HeadRefOid,
		State: strings.ToLower(g.State), Draft: g.IsDraft,
		Mergeable: mergeableState(g.Mergeable),
	}
	pr.ReviewDecision = g.reviewDecision()
	pr.ApprovedSHA = g.approvedSHA()
	if len(g.Commits.Nodes) == 0 {
		return pr, false
	}
	commit := g.Commits.Nodes[0].Commit
	if commit.Oid != g.HeadRefOid {
		// Checks of any commit but the head are not this PR's CI state;
		// leave them unfetched rather than report stale ones.
		return pr, false
	}
	pr.Checks = []forge.Check{}
	if commit.StatusCheckRollup == nil {
		return pr, false
	}
	ctxs := commit.StatusCheckRollup.Contexts
	if ctxs.PageInfo.HasNextPage || len(ctxs.Nodes) < ctxs.TotalCount {
		return pr, true
	}
	for _, n := range ctxs.Nodes {
		pr.Checks = append(pr.Checks, n.toCheck(commit.Oid))
	}
	return pr, false
}

// reviewDecision is GitHub's, or, where GitHub leaves it null because
// branch protection requires no review, the one its reviews make: any
// writer's request for changes outweighs approvals, as it would if reviews
// were required. Without either it is ReviewNone, which pr_approved does
// not take for an approval.
func (g *gqlPR) reviewDecision() string {
	if g.ReviewDecision != nil && *g.ReviewDecision != "" {
		return strings.ToLower(*g.ReviewDecision)
	}
	decision := forge.ReviewNone
	for _, r := range g.LatestOpinionatedReviews.Nodes {
		switch r.State {
		case "CHANGES_REQUESTED":
			return forge.ReviewChangesRequested
		case "APPROVED":
			decision = forge.ReviewApproved
		}
	}
	return decision
}

// approvedSHA is the commit a writer's approval covers: the head if any
// approval was given on it, else the commit of an older approval.
func (g *gqlPR) approvedSHA() string {
	sha := ""
	for _, r := range g.LatestOpinionatedReviews.Nodes {
		if r.State != "APPROVED" || r.Commit == nil || r.Commit.Oid == "" {
			continue
		}
		if r.Commit.Oid == g.HeadRefOid {
			return r.Commit.Oid
		}
		sha = r.Commit.Oid
	}
	return sha
}

func mergeableState(s string) string {
	switch s {
	case "MERGEABLE":
		return forge.Mergeable
	case "CONFLICTING":
		return forge.Conflicting
	}
	return forge.Unknown
}

func (n gqlContext) toCheck(sha string) forge.Check {
	if n.Typename == "StatusContext" {
		c := forge.Check{Name: n.Context, SHA: sha, State: statusState(strings.ToLower(n.State)),
			URL: n.TargetURL, Kind: "status"}
		if n.CreatedAt != nil {
			c.StartedAt = *n.CreatedAt
			// Every state of a status is a new status, so the time this
			// one was posted is when its context reached a result.
			if c.State.Done() {
				c.CompletedAt = *n.CreatedAt
			}
		}
		return c
	}
	conclusion := ""
	if n.Conclusion != nil {
		conclusion = strings.ToLower(*n.Conclusion)
	}
	app := ""
	if n.CheckSuite != nil && n.CheckSuite.App != nil {
		app = n.CheckSuite.App.Slug
	}
	c := forge.Check{ID: n.DatabaseID, Name: n.Name, SHA: sha,
		State: checkRunState(strings.ToLower(n.Status), conclusion),
		URL:   n.DetailsURL, Kind: "check_run", JobID: actionsJobID(app, n.DetailsURL, n.DatabaseID)}
	if n.StartedAt != nil {
		c.StartedAt = *n.StartedAt
	}
	if n.CompletedAt != nil {
		c.CompletedAt = *n.CompletedAt
	}
	return c
}

// PR returns one PR's state, with the checks of its head commit.
func (c *Client) PR(ctx context.Context, number int) (*forge.PR, error) {
	prs, err := c.PRs(ctx, []int{number})
	if err != nil {
		return nil, err
	}
	pr, ok := prs[number]
	if !ok {
		return nil, fmt.Errorf("github: PR #%d in %s: %w", number, c.repo.FullName(), forge.ErrNotFound)
	}
	return pr, nil
}

// WaitMergeable returns the PR once GitHub knows whether it merges
// cleanly. GitHub computes that in the background after a push, answering
// UNKNOWN meanwhile, so it asks again a few times with backoff; if still
// unknown it returns the PR with Mergeable Unknown and no error, for the
// caller to try later. A PR no longer open is returned at once. If the
// head is not expectHead (empty: the head first seen), the answer would
// be about another commit: it returns the PR and an error wrapping
// ErrHeadChanged.
func (c *Client) WaitMergeable(ctx context.Context, number int, expectHead string) (*forge.PR, error) {
	delay := c.mergeableDelay
	for poll := 0; ; poll++ {
		pr, err := c.PR(ctx, number)
		if err != nil {
			return nil, err
		}
		if expectHead == "" {
			expectHead = pr.HeadSHA
		}
		if pr.HeadSHA != expectHead {
			return pr, fmt.Errorf("github: waiting for PR #%d to be mergeable: %w: head moved from %s to %s; aborted",
				number, ErrHeadChanged, short(expectHead), short(pr.HeadSHA))
		}
		if pr.Mergeable != forge.Unknown || pr.State != forge.StateOpen || poll >= c.mergeablePolls {
			return pr, nil
		}
		if err := c.sleep(ctx, delay); err != nil {
			return nil, err
		}
		delay = min(delay*2, 30*time.Second)
	}
}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}
