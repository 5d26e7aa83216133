package github

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/agenttree/agenttree/forge"
)

// ErrNotRerunnable: a check cannot be started again through the API (a
// commit status belongs to an external CI service).
var ErrNotRerunnable = forge.ErrNotRerunnable

// maxCheckPages bounds pagination: 10 pages of 100 is more checks than any
// sane commit has, and a bug or a pathological repository must not turn
// one poll into hundreds of requests.
const maxCheckPages = 10

// checkRunState classifies a check run.
func checkRunState(status, conclusion string) forge.CheckState {
	if status != "completed" {
		// queued, in_progress, waiting, requested, pending
		return forge.CheckPending
	}
	switch conclusion {
	case "success":
		return forge.CheckSuccess
	case "neutral":
		return forge.CheckNeutral
	case "skipped":
		return forge.CheckSkipped
	case "cancelled":
		return forge.CheckCancelled
	case "timed_out":
		return forge.CheckTimedOut
	case "action_required":
		return forge.CheckActionRequired
	case "stale":
		return forge.CheckStale
	case "":
		// Completed without a conclusion should not happen; waiting is
		// safer than calling it either way.
		return forge.CheckPending
	}
	// failure, startup_failure, and anything GitHub adds later: an
	// unknown result must not let a PR through.
	return forge.CheckFailure
}

// statusState classifies a commit status.
func statusState(state string) forge.CheckState {
	switch state {
	case "success":
		return forge.CheckSuccess
	case "pending", "expected":
		return forge.CheckPending
	}
	return forge.CheckFailure // failure, error
}

var jobURLRE = regexp.MustCompile(`/actions/runs/\d+/job/(\d+)`)

// actionsJobID finds the Actions job behind a check run. On GitHub the job
// id is the check run id; the details URL says so explicitly, so it wins.
func actionsJobID(appSlug, detailsURL string, checkRunID int64) int64 {
	if m := jobURLRE.FindStringSubmatch(detailsURL); m != nil {
		id, _ := strconv.ParseInt(m[1], 10, 64)
		return id
	}
	if appSlug == "github-actions" {
		return checkRunID
	}
	return 0
}

type restCheckRun struct {
	ID          int64      `json:"id"`
	HeadSHA     string     `json:"head_sha"`
	Name        string     `json:"name"`
	Status      string     `json:"status"`
	Conclusion  *string    `json:"conclusion"`
	HTMLURL     string     `json:"html_url"`
	DetailsURL  string     `json:"details_url"`
	StartedAt   *time.Time `json:"started_at"`
	CompletedAt *time.Time `json:"completed_at"`
	App         *struct {
		Slug string `json:"slug"`
	} `json:"app"`
}

type restStatus struct {
	ID        int64      `json:"id"`
	Context   string     `json:"context"`
	State     string     `json:"state"`
	TargetURL string     `json:"target_url"`
	CreatedAt *time.Time `json:"created_at"`
	UpdatedAt *time.Time `json:"updated_at"`
}

// Checks lists the latest check runs and commit statuses of a commit. Every
// check is bound to the commit's full sha; anything GitHub reports for
// another commit is dropped.
func (c *Client) Checks(ctx context.Context, sha string) ([]forge.Check, error) {
	if sha == "" {
		return nil, fmt.Errorf("github: checks: no commit given")
	}
	op := fmt.Sprintf("github: checks of %s", short(sha))
	checks := []forge.Check{}
	for page := 1; page <= maxCheckPages; page++ {
		var res struct {
			TotalCount int            `json:"total_count"`
			CheckRuns  []restCheckRun `json:"check_runs"`
		}
		if err := c.call(ctx, op, http.MethodGet, c.path("commits/%s/check-runs?per_page=100&page=%d", sha, page), nil, &res); err != nil {
			return nil, err
		}
		for _, r := range res.CheckRuns {
			bound, ok := sameCommit(sha, r.HeadSHA)
			if !ok {
				continue
			}
			checks = append(checks, r.toCheck(bound))
		}
		if len(res.CheckRuns) < 100 || page*100 >= res.TotalCount {
			break
		}
	}
	for page := 1; page <= maxCheckPages; page++ {
		var res struct {
			SHA        string       `json:"sha"`
			TotalCount int          `json:"total_count"`
			Statuses   []restStatus `json:"statuses"`
		}
		if err := c.call(ctx, op, http.MethodGet, c.path("commits/%s/status?per_page=100&page=%d", sha, page), nil, &res); err != nil {
			return nil, err
		}
		bound, ok := sameCommit(sha, res.SHA)
		if !ok {
			break
		}
		for _, s := range res.Statuses {
			checks = append(checks, s.toCheck(bound))
		}
		if len(res.Statuses) < 100 || page*100 >= res.TotalCount {
			break
		}
	}
	return checks, nil
}

// sameCommit reports whether GitHub's full sha is the commit asked for
// (perhaps abbreviated), and which sha to bind the check to.
func sameCommit(asked, reported string) (string, bool) {
	switch {
	case reported == "":
		return asked, true
	case strings.HasPrefix(reported, asked):
		return reported, true
	}
	return "", false
}

func (r restCheckRun) toCheck(sha string) forge.Check {
	conclusion := ""
	if r.Conclusion != nil {
		conclusion = *r.Conclusion
	}
	slug := ""
	if r.App != nil {
		slug = r.App.Slug
	}
	url := r.HTMLURL
	if url == "" {
		url = r.DetailsURL
	}
	c := forge.Check{ID: r.ID, Name: r.Name, SHA: sha, State: checkRunState(r.Status, conclusion),
		URL: url, Kind: "check_run", JobID: actionsJobID(slug, r.DetailsURL+" "+r.HTMLURL, r.ID)}
	if r.StartedAt != nil {
		c.StartedAt = *r.StartedAt
	}
	if r.CompletedAt != nil {
		c.CompletedAt = *r.CompletedAt
	}
	return c
}

func (s restStatus) toCheck(sha string) forge.Check {
	c := forge.Check{ID: s.ID, Name: s.Context, SHA: sha, State: statusState(s.State), URL: s.TargetURL, Kind: "status"}
	if s.CreatedAt != nil {
		c.StartedAt = *s.CreatedAt
	}
	if c.State.Done() {
		// A status is posted once per state, so created_at is when it got
		// its result if updated_at is missing.
		switch {
		case s.UpdatedAt != nil:
			c.CompletedAt = *s.UpdatedAt
		case s.CreatedAt != nil:
			c.CompletedAt = *s.CreatedAt
		}
	}
	return c
}

// Rerun starts checks again: an Actions job is rerun, another app's check
// run is re-requested. Commit statuses come from CI outside GitHub and
// cannot be; they are reported in an error wrapping ErrNotRerunnable after
// the others have been started.
func (c *Client) Rerun(ctx context.Context, checks []forge.Check) error {
	seen := map[string]bool{}
	var skipped []string
	for _, ch := range checks {
		var path, what string
		switch {
		case ch.Kind == "check_run" && ch.JobID != 0:
			path, what = c.path("actions/jobs/%d/rerun", ch.JobID), fmt.Sprintf("job %d", ch.JobID)
		case ch.Kind == "check_run" && ch.ID != 0:
			path, what = c.path("check-runs/%d/rerequest", ch.ID), fmt.Sprintf("check run %d", ch.ID)
		default:
			skipped = append(skipped, ch.Name)
			continue
		}
		if seen[path] {
			continue
		}
		seen[path] = true
		op := fmt.Sprintf("github: rerun %q (%s)", ch.Name, what)
		// Asking twice for a rerun starts one rerun, so a 5xx may be
		// retried.
		err := c.call(retryable(ctx), op, http.MethodPost, path, nil, nil)
		if status, msg := httpStatus(err); status == http.StatusForbidden && strings.Contains(strings.ToLower(msg), "already running") {
			err = nil
		}
		if err != nil {
			return err
		}
	}
	if len(skipped) > 0 {
		return fmt.Errorf("github: %w: %s (commit statuses; rerun them in their CI service)", ErrNotRerunnable, strings.Join(skipped, ", "))
	}
	return nil
}

// actionsTimestamp is the prefix GitHub Actions puts on every log line; it
// costs an agent reading the tail tokens and tells it nothing.
var actionsTimestamp = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z `)

// DefaultLogLines is the tail Log returns when asked for lines <= 0.
const DefaultLogLines = 100

// Log returns the last lines of an Actions job's log, timestamps
// stripped. A check without a job, or whose log is gone, has none: "".
func (c *Client) Log(ctx context.Context, ch forge.Check, lines int) (string, error) {
	if ch.JobID == 0 {
		return "", nil
	}
	if lines <= 0 {
		lines = DefaultLogLines
	}
	op := fmt.Sprintf("github: log of %q (job %d)", ch.Name, ch.JobID)
	resp, err := c.request(ctx, op, http.MethodGet, c.path("actions/jobs/%d/logs", ch.JobID), nil)
	if errors.Is(err, forge.ErrNotFound) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	tail, err := tailLines(resp.Body, lines)
	if err != nil {
		return "", fmt.Errorf("%s: %w", op, err)
	}
	return tail, nil
}

// tailLines keeps the last n lines in a ring, so a log of any size is read
// in constant memory.
func tailLines(r io.Reader, n int) (string, error) {
	ring := make([]string, n)
	count := 0
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := strings.TrimSuffix(sc.Text(), "\r")
		if count == 0 {
			line = strings.TrimPrefix(line, "\ufeff")
		}
		ring[count%n] = actionsTimestamp.ReplaceAllString(line, "")
		count++
	}
	if err := sc.Err(); err != nil {
		return "", err
	}
	start := 0
	if count > n {
		start = count % n
	}
	kept := min(count, n)
	out := make([]string, 0, kept)
	for i := 0; i < kept; i++ {
		out = append(out, ring[(start+i)%n])
	}
	return strings.Join(out, "\n"), nil
}
