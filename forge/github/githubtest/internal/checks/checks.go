// Package checks is the fake GitHub server's check runs and commit
// statuses as GitHub shows them: their fields, a check run in the REST
// API, the combined status, and the status check rollup GraphQL answers.
// Which runs and statuses a commit has, and which supersede which, stays
// with githubtest's repository state.
package checks

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/agenttree/agenttree/forge/github/githubtest/internal/gql"
	"github.com/agenttree/agenttree/forge/github/githubtest/internal/rest"
)

// CheckRun is one check run on a commit.
type CheckRun struct {
	ID   int64
	Name string
	SHA  string
	// Status is queued, in_progress, completed, waiting, requested or
	// pending; queued when empty.
	Status string
	// Conclusion is set once Status is completed: success, failure,
	// neutral, cancelled, skipped, timed_out, action_required, stale,
	// startup_failure.
	Conclusion string
	HTMLURL    string
	DetailsURL string
	// App is the GitHub App slug; "github-actions" when empty. Only Actions
	// check runs have a job (and so a log and a job rerun).
	App         string
	JobID       int64
	RunID       int64
	Log         string
	StartedAt   time.Time
	CompletedAt time.Time
}

// Status is one commit status (the older statuses API).
type Status struct {
	ID          int64
	SHA         string
	Context     string
	State       string // error, failure, pending, success
	TargetURL   string
	Description string
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

// RunJSON is a check run as the REST API answers it, on the server at
// base, in repository fullName.
func RunJSON(base, fullName string, c *CheckRun) map[string]any {
	var conclusion any
	if c.Status == "completed" {
		conclusion = c.Conclusion
	}
	return map[string]any{
		"id":           c.ID,
		"head_sha":     c.SHA,
		"node_id":      "CR_" + strconv.FormatInt(c.ID, 10),
		"url":          fmt.Sprintf("%s/repos/%s/check-runs/%d", base, fullName, c.ID),
		"html_url":     c.HTMLURL,
		"details_url":  c.DetailsURL,
		"status":       c.Status,
		"conclusion":   conclusion,
		"started_at":   rest.Time(c.StartedAt),
		"completed_at": rest.Time(c.CompletedAt),
		"name":         c.Name,
		"output":       map[string]any{"title": nil, "summary": nil},
		"check_suite":  map[string]any{"id": c.RunID},
		"app":          map[string]any{"slug": c.App, "name": c.App},
	}
}

// Combined is the combined state of a commit's latest statuses: failure
// if any failed or errored, else pending if any is pending or there are
// none, else success.
func Combined(all []*Status) string {
	combined := "success"
	if len(all) == 0 {
		combined = "pending"
	}
	for _, st := range all {
		switch st.State {
		case "failure", "error":
			combined = "failure"
		case "pending":
			if combined != "failure" {
				combined = "pending"
			}
		}
	}
	return combined
}

// StatusJSON is a status as the combined status lists it.
func StatusJSON(st *Status) map[string]any {
	return map[string]any{
		"id": st.ID, "context": st.Context, "state": st.State,
		"target_url": st.TargetURL, "description": st.Description,
		"created_at": rest.Time(st.CreatedAt), "updated_at": rest.Time(st.UpdatedAt),
	}
}

// rollupRank orders the rollup states: the rollup is its worst context's.
var rollupRank = map[string]int{"SUCCESS": 0, "PENDING": 1, "FAILURE": 2, "ERROR": 3}

// Rollup is a commit's statusCheckRollup given its latest check runs and
// statuses, the first of them as contexts; null when it has neither.
func Rollup(runs []*CheckRun, statuses []*Status, first int) any {
	var nodes []any
	state := "SUCCESS"
	worse := func(st string) {
		if rollupRank[st] > rollupRank[state] {
			state = st
		}
	}
	for _, c := range runs {
		worse(checkRunState(c))
		nodes = append(nodes, checkRunNode(c))
	}
	for _, st := range statuses {
		worse(strings.ToUpper(st.State))
		nodes = append(nodes, map[string]any{
			"__typename": "StatusContext",
			"context":    st.Context,
			"state":      strings.ToUpper(st.State),
			"targetUrl":  st.TargetURL,
			"createdAt":  rest.Time(st.CreatedAt),
		})
	}
	if len(nodes) == 0 {
		return nil
	}
	return map[string]any{
		"state":    state,
		"contexts": gql.Connection(nodes, "", first, func(n any) any { return n }),
	}
}

// checkRunState is what a check run adds to the rollup's state.
func checkRunState(c *CheckRun) string {
	switch {
	case c.Status != "completed":
		return "PENDING"
	case c.Conclusion == "success", c.Conclusion == "neutral", c.Conclusion == "skipped":
		return "SUCCESS"
	}
	return "FAILURE"
}

func checkRunNode(c *CheckRun) map[string]any {
	var conclusion any
	if c.Status == "completed" {
		// GraphQL spells REST's conclusions in capitals: timed_out, TIMED_OUT.
		conclusion = strings.ToUpper(c.Conclusion)
	}
	return map[string]any{
		"__typename":  "CheckRun",
		"name":        c.Name,
		"status":      strings.ToUpper(c.Status),
		"conclusion":  conclusion,
		"detailsUrl":  c.DetailsURL,
		"databaseId":  c.ID,
		"startedAt":   rest.Time(c.StartedAt),
		"completedAt": rest.Time(c.CompletedAt),
		"checkSuite":  map[string]any{"app": map[string]any{"slug": c.App}},
	}
}
