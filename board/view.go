package board

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/agenttree/agenttree/controller/ratelimit"
	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/engine/machine/render"
	"github.com/agenttree/agenttree/engine/policy"
	"github.com/agenttree/agenttree/engine/report"
	"github.com/agenttree/agenttree/hooks"
	"github.com/agenttree/agenttree/sessions/waiton"
	"github.com/agenttree/agenttree/stages"
)

// boardView is the board page: the issues that need a person first, then
// a column per stage.
type boardView struct {
	Token, CSRF string
	NeedsYou    []card
	Columns     []column
	// Gen is the event log's sequence over every issue: the sum of their
	// versions, one per write of an issue.yaml. It numbers the page's
	// server-sent events.
	Gen    int
	Errors []string
	// RateLimited says the forge's rate limit holds, as the controller
	// recorded it (status says the same); "" when it does not.
	RateLimited string
}

// column is one stage of the pipeline and the issues at it.
type column struct {
	Stage, Owner string
	Cards        []card
}

// card is one issue as the board shows it. Every string is shown as
// text: titles and reasons come from agents.
type card struct {
	// Token and CSRF are the board's, for the card's link and form.
	Token, CSRF         string
	ID                  int
	Title, Stage        string
	Agent, AgentState   string
	CI, Budget, Waiting string
	Waited              string
	Escalated, Review   bool
	// Why is an escalation's reason.
	Why string
}

// readBoard reads every issue into the board, as `agenttree status`
// reads them (waiton), without asking the forge.
func readBoard(ctx context.Context, e *engine.Engine, now time.Time) (boardView, error) {
	listed, err := e.Store.Scan()
	if err != nil {
		return boardView{}, fmt.Errorf("list the issues in %s: %w", e.Store.Root(), err)
	}
	agents := waiton.LookAtAgents(ctx, e)
	var v boardView
	if rl, ok := ratelimit.Read(e.Store.Root(), now); ok {
		v.RateLimited = fmt.Sprintf("rate-limited until %s (%s): requests to the forge wait until then",
			rl.Until.Local().Format(time.TimeOnly), rl.Resource)
	}
	cols := map[string]int{}
	for _, f := range e.Config.Flows {
		for _, n := range f.Nodes {
			if _, seen := cols[n.Path]; !seen {
				cols[n.Path] = len(v.Columns)
				v.Columns = append(v.Columns, column{Stage: n.Path, Owner: render.Describe(n)})
			}
		}
	}
	for _, l := range listed {
		if l.Err != nil {
			v.Errors = append(v.Errors, fmt.Sprintf("issue %d cannot be read: %s (`agenttree verify %d`)", l.ID, report.Safe(l.Err.Error()), l.ID))
			continue
		}
		var poll *issues.Poll
		if l.Watch != nil {
			poll = l.Watch.Poll
		}
		c := cardOf(e.Config, l.Issue, poll, agents, now)
		v.Gen += l.Issue.Version
		if c.Escalated || c.Review {
			v.NeedsYou = append(v.NeedsYou, c)
		}
		i, ok := cols[c.Stage]
		if !ok {
			i = len(v.Columns)
			cols[c.Stage] = i
			v.Columns = append(v.Columns, column{Stage: c.Stage, Owner: "not in the config"})
		}
		v.Columns[i].Cards = append(v.Columns[i].Cards, c)
	}
	// Escalations first, then the reviews that waited longest.
	slices.SortStableFunc(v.NeedsYou, func(a, b card) int {
		if a.Escalated != b.Escalated {
			if a.Escalated {
				return -1
			}
			return 1
		}
		return 0
	})
	return v, nil
}

// cardOf is iss on the board.
func cardOf(cfg *stages.Config, iss *issues.Issue, poll *issues.Poll, agents *waiton.Look, now time.Time) card {
	w := waiton.On(cfg, iss, poll, agents)
	c := card{ID: iss.ID, Title: report.SafeTitle(iss.Title), Stage: iss.Stage, Waiting: report.Safe(w.What),
		Escalated: iss.Escalated != nil, CI: ciState(iss, poll), Budget: budgetText(cfg, iss)}
	if n, ok := cfg.Node(iss.Stage); ok && iss.Escalated == nil && n.HumanReview() {
		c.Review = true
	}
	if iss.Escalated != nil {
		c.Why = report.Safe(iss.Escalated.Reason)
	}
	if w.Who != waiton.WaiterNobody {
		c.Waited = report.Age(now.Sub(cmp.Or(w.Since, waiton.Entered(iss))))
	}
	if rec, alive, known := agents.Agent(iss.ID); rec != nil {
		c.Agent = report.Safe(rec.Agent)
		switch {
		case !rec.Stopped.IsZero():
			c.AgentState = "stopped"
		case !known:
			c.AgentState = "unknown"
		case alive:
			c.AgentState = "alive"
		default:
			c.AgentState = "ended"
		}
	}
	return c
}

// ciState is the CI of the issue's head as the controller last recorded
// it: its poll's checks, else a pass the issue's outputs record.
func ciState(iss *issues.Issue, poll *issues.Poll) string {
	if poll != nil && poll.PR == iss.PRNumber && poll.Checks != nil && poll.Checks.Total > 0 &&
		(poll.Head == "" || iss.HeadSHA == "" || poll.Head == iss.HeadSHA) {
		c := poll.Checks
		switch {
		case c.Failing > 0:
			return fmt.Sprintf("failed (%d of %d)", c.Failing, c.Total)
		case c.Pending > 0:
			return fmt.Sprintf("running (%d/%d done)", c.Total-c.Pending, c.Total)
		default:
			return fmt.Sprintf("passed (%d)", c.Total)
		}
	}
	if sha := iss.Outputs[stages.CIPassedSHA]; sha != "" && (iss.HeadSHA == "" || sha == iss.HeadSHA) {
		return "passed"
	}
	if failed := iss.Outputs["failed_checks"]; failed != "" {
		return "failed: " + report.Safe(failed)
	}
	return ""
}

// budgetText is the step backs the issue used of each budget it drew on
// ("ci_failed 1/3"), as `status` counts them.
func budgetText(cfg *stages.Config, iss *issues.Issue) string {
	node, _ := cfg.Node(iss.Stage)
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(iss.Attempts)) {
		if used := iss.Attempts[k]; used > 0 {
			parts = append(parts, fmt.Sprintf("%s %d/%d", k, used, policy.Budget(cfg, node, hooks.Class(k))))
		}
	}
	return strings.Join(parts, ", ")
}
