package ghapi

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/agenttree/agenttree/internal/gitx"
)

// CheckRun is a check run as the REST API returns it. The batched GraphQL
// query gives its check runs in this shape too, lower-cased.
type CheckRun struct {
	ID      int64  `json:"id"`
	HeadSHA string `json:"head_sha"`
	Name    string `json:"name"`
	// Status is queued, in_progress, completed, waiting, requested or
	// pending.
	Status string `json:"status"`
	// Conclusion is set once Status is completed: success, failure,
	// neutral, cancelled, skipped, timed_out, action_required, stale,
	// startup_failure, ...
	Conclusion  *string    `json:"conclusion"`
	HTMLURL     string     `json:"html_url"`
	DetailsURL  string     `json:"details_url"`
	StartedAt   *time.Time `json:"started_at"`
	CompletedAt *time.Time `json:"completed_at"`
	App         *App       `json:"app"`
}

// App is the GitHub App behind a check run ("github-actions", ...).
type App struct {
	Slug string `json:"slug"`
}

// Status is a commit status, posted by a CI service outside GitHub's
// checks.
type Status struct {
	ID      int64  `json:"id"`
	Context string `json:"context"`
	// State is pending, expected, success, failure or error.
	State     string     `json:"state"`
	TargetURL string     `json:"target_url"`
	CreatedAt *time.Time `json:"created_at"`
	UpdatedAt *time.Time `json:"updated_at"`
}

// CombinedStatus is the latest status of each context on a commit.
type CombinedStatus struct {
	// SHA is the commit's full id ("" if GitHub did not say).
	SHA      string   `json:"sha"`
	Statuses []Status `json:"statuses"`
}

// CheckRuns lists the latest check runs of ref (a commit).
func (c *Client) CheckRuns(ctx context.Context, ref string) ([]CheckRun, error) {
	op := fmt.Sprintf("github: check runs of %s", gitx.ShortSHA(ref))
	var runs []CheckRun
	err := paginate(func(page int) (int, int, error) {
		var res struct {
			TotalCount int        `json:"total_count"`
			CheckRuns  []CheckRun `json:"check_runs"`
		}
		err := c.get(ctx, op, c.path("commits/%s/check-runs?per_page=%d&page=%d", ref, perPage, page), &res)
		runs = append(runs, res.CheckRuns...)
		return len(res.CheckRuns), res.TotalCount, err
	})
	if err != nil {
		return nil, err
	}
	return runs, nil
}

// CombinedStatus reads the commit statuses of ref.
func (c *Client) CombinedStatus(ctx context.Context, ref string) (*CombinedStatus, error) {
	op := fmt.Sprintf("github: commit statuses of %s", gitx.ShortSHA(ref))
	var all CombinedStatus
	err := paginate(func(page int) (int, int, error) {
		var res struct {
			CombinedStatus
			TotalCount int `json:"total_count"`
		}
		err := c.get(ctx, op, c.path("commits/%s/status?per_page=%d&page=%d", ref, perPage, page), &res)
		all.SHA = res.SHA
		all.Statuses = append(all.Statuses, res.Statuses...)
		return len(res.Statuses), res.TotalCount, err
	})
	if err != nil {
		return nil, err
	}
	return &all, nil
}

// RerunJob starts a GitHub Actions job again. Asking twice starts one
// rerun, so a 5xx is retried.
func (c *Client) RerunJob(ctx context.Context, jobID int64) error {
	return c.do(ctx, request{op: fmt.Sprintf("github: rerunning Actions job %d", jobID),
		method: http.MethodPost, path: c.path("actions/jobs/%d/rerun", jobID), idempotent: true}, nil)
}

// RerequestCheckRun asks the app behind a check run to run it again.
// Asking twice starts one run, so a 5xx is retried.
func (c *Client) RerequestCheckRun(ctx context.Context, id int64) error {
	return c.do(ctx, request{op: fmt.Sprintf("github: re-requesting check run %d", id),
		method: http.MethodPost, path: c.path("check-runs/%d/rerequest", id), idempotent: true}, nil)
}

// JobLog opens the plain-text log of an Actions job (following GitHub's
// redirect to the log blob), for the caller to read and close.
func (c *Client) JobLog(ctx context.Context, jobID int64) (io.ReadCloser, error) {
	resp, err := c.open(ctx, request{op: fmt.Sprintf("github: log of Actions job %d", jobID),
		method: http.MethodGet, path: c.path("actions/jobs/%d/logs", jobID)})
	if err != nil {
		return nil, err
	}
	return resp.Body, nil
}
