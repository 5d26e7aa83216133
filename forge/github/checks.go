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
	"sync"

	"github.com/agenttree/agenttree/forge"
	"github.com/agenttree/agenttree/forge/github/ghapi"
)

// Checks lists the latest check runs and commit statuses of a commit. Every
// check is bound to the commit's full sha; anything GitHub reports for
// another commit is dropped.
func (c *Client) Checks(ctx context.Context, sha string) (_ []forge.Check, err error) {
	defer asForgeError(&err)
	if sha == "" {
		return nil, fmt.Errorf("github: checks: no commit given")
	}
	runs, err := c.api.CheckRuns(ctx, sha)
	if err != nil {
		return nil, err
	}
	combined, err := c.api.CombinedStatus(ctx, sha)
	if err != nil {
		return nil, err
	}
	checks := []forge.Check{}
	for _, r := range runs {
		if bound, ok := sameCommit(sha, r.HeadSHA); ok {
			checks = append(checks, checkRun(r, bound))
		}
	}
	if bound, ok := sameCommit(sha, combined.SHA); ok {
		checks = appendStatuses(checks, combined.Statuses, bound)
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

// checkRun maps a check run of commit sha.
func checkRun(r ghapi.CheckRun, sha string) forge.Check {
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
		URL: url, Kind: "check_run", JobID: actionsJobID(slug, r.DetailsURL+" "+r.HTMLURL, r.ID),
		Queued: checkRunQueued(r.Status)}
	if r.StartedAt != nil {
		c.StartedAt = *r.StartedAt
	}
	if r.CompletedAt != nil {
		c.CompletedAt = *r.CompletedAt
	}
	if c.State == forge.CheckFailure && conclusion == "startup_failure" {
		c.Environment = "its workflow could not start (startup_failure)"
	}
	return c
}

// checkRunQueued reports whether a check run of status has not started:
// it waits for a runner (queued), an approval or a deployment (waiting,
// requested) or a concurrency group (pending). in_progress and completed
// have started.
func checkRunQueued(status string) bool {
	switch status {
	case "queued", "waiting", "requested", "pending":
		return true
	}
	return false
}

// appendStatuses maps the commit statuses of commit sha.
func appendStatuses(checks []forge.Check, statuses []ghapi.Status, sha string) []forge.Check {
	for _, s := range statuses {
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
		checks = append(checks, c)
	}
	return checks
}

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

// jobURLRE is compiled on first use: most processes never read a check
// run, and should not pay for it when they start.
var jobURLRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`/actions/runs/\d+/job/(\d+)`) })

// actionsJobID finds the Actions job behind a check run. On GitHub the job
// id is the check run id; the details URL says so explicitly, so it wins.
func actionsJobID(appSlug, detailsURL string, checkRunID int64) int64 {
	if m := jobURLRE().FindStringSubmatch(detailsURL); m != nil {
		id, _ := strconv.ParseInt(m[1], 10, 64)
		return id
	}
	if appSlug == "github-actions" {
		return checkRunID
	}
	return 0
}

// Rerun starts checks again: an Actions job is rerun, another app's check
// run is re-requested. Commit statuses come from CI outside GitHub and
// cannot be; they are reported in an error wrapping
// forge.ErrNotRerunnable after the others have been started.
func (c *Client) Rerun(ctx context.Context, checks []forge.Check) (err error) {
	defer asForgeError(&err)
	started := map[rerunTarget]bool{}
	var skipped []string
	for _, ch := range checks {
		var t rerunTarget
		switch {
		case ch.Kind == "check_run" && ch.JobID != 0:
			t = rerunTarget{job: true, id: ch.JobID}
		case ch.Kind == "check_run" && ch.ID != 0:
			t = rerunTarget{id: ch.ID}
		default:
			skipped = append(skipped, ch.Name)
			continue
		}
		if started[t] {
			continue
		}
		started[t] = true
		if err := c.rerun(ctx, t); err != nil {
			return fmt.Errorf("rerun %q: %w", ch.Name, err)
		}
	}
	if len(skipped) > 0 {
		return fmt.Errorf("github: %w: %s (commit statuses; rerun them in their CI service)", forge.ErrNotRerunnable, strings.Join(skipped, ", "))
	}
	return nil
}

// rerunTarget is what Rerun starts: an Actions job, or a check run.
type rerunTarget struct {
	job bool
	id  int64
}

func (c *Client) rerun(ctx context.Context, t rerunTarget) error {
	start := c.api.RerequestCheckRun
	if t.job {
		start = c.api.RerunJob
	}
	err := start(ctx, t.id)
	// A job that is running again already will have a result: done.
	if code, msg := ghapi.HTTPStatus(err); code == http.StatusForbidden && strings.Contains(strings.ToLower(msg), "already running") {
		return nil
	}
	return err
}

// actionsTimestamp is the prefix GitHub Actions puts on every log line; it
// costs an agent reading the tail tokens and tells it nothing. Compiled
// on first use.
var actionsTimestamp = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z `)
})

// DefaultLogLines is the tail Log returns when asked for lines <= 0.
const DefaultLogLines = 100

// Log returns the last lines of an Actions job's log, timestamps
// stripped. A check without a job, or whose log is gone, has none: "".
func (c *Client) Log(ctx context.Context, ch forge.Check, lines int) (_ string, err error) {
	defer asForgeError(&err)
	if ch.JobID == 0 {
		return "", nil
	}
	if lines <= 0 {
		lines = DefaultLogLines
	}
	body, err := c.api.JobLog(ctx, ch.JobID)
	if errors.Is(err, ghapi.ErrNotFound) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	defer body.Close()
	tail, err := tailLines(body, lines)
	if err != nil {
		return "", fmt.Errorf("github: log of %q (job %d): %w", ch.Name, ch.JobID, err)
	}
	return tail, nil
}

// tailLines keeps the last n lines in a ring, so a log of any size is read
// in constant memory (internal/lines wants the whole text).
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
		ring[count%n] = line
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
	for i := range kept {
		// Only the lines kept lose their Actions timestamps.
		out = append(out, actionsTimestamp().ReplaceAllString(ring[(start+i)%n], ""))
	}
	return strings.Join(out, "\n"), nil
}
