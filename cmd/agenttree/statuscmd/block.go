package statuscmd

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/agenttree/agenttree/cmd/agenttree/cmdutil"
	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/engine/breaker"
	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/engine/machine/render"
	"github.com/agenttree/agenttree/engine/notice"
	"github.com/agenttree/agenttree/engine/policy"
	"github.com/agenttree/agenttree/forge"
	"github.com/agenttree/agenttree/hooks"
	"github.com/agenttree/agenttree/internal/gitx"
	"github.com/agenttree/agenttree/sessions/waiton"
	"github.com/agenttree/agenttree/stages"
)

// forgeLookTimeout bounds the forge's answer for a status block: a person
// is waiting, and the rest of the block does not need it.
const forgeLookTimeout = 20 * time.Second

// Block is one issue's status in full (`status ID --block`).
type Block struct {
	ID        int    `json:"id"`
	Title     string `json:"title"`
	Flow      string `json:"flow"`
	Stage     string `json:"stage"`
	Owner     string `json:"owner"`
	WaitingOn string `json:"waiting_on"`
	// EnteredAt is when the issue came to its stage; ElapsedS the seconds
	// since.
	EnteredAt time.Time `json:"entered_at"`
	ElapsedS  int64     `json:"elapsed_s"`
	// Iteration counts the controller's looks at the PR (0: none yet).
	Iteration  int       `json:"iteration"`
	PollStatus string    `json:"poll_status,omitempty"`
	NextLookAt time.Time `json:"next_look_at,omitzero"`
	PR         *BlockPR  `json:"pr,omitempty"`
	Checks     *Checks   `json:"checks,omitempty"`
	// ForgeError is why the PR could not be read; the rest still shows.
	ForgeError string         `json:"forge_error,omitempty"`
	Breaker    issues.Breaker `json:"breaker"`
	// BreakerWarning says, while the breaker is half-open, what closes
	// and what opens it.
	BreakerWarning string             `json:"breaker_warning,omitempty"`
	Budgets        []BudgetUse        `json:"budgets"`
	LatestAction   *Action            `json:"latest_action,omitempty"`
	Undelivered    int                `json:"undelivered"`
	Escalated      *issues.Escalation `json:"escalated,omitempty"`
	// Recommendation is what to run next, and who runs it.
	Recommendation Recommendation `json:"recommendation"`
	// Warnings name the issue's files that could not be read.
	Warnings []string `json:"warnings,omitempty"`

	// wait is WaitingOn with its clock, for people.
	wait waiton.Waiting
}

// BlockPR is the issue's PR as the forge reports it (as issue.yaml holds
// it when the forge cannot be asked).
type BlockPR struct {
	Number    int    `json:"number"`
	URL       string `json:"url,omitempty"`
	State     string `json:"state,omitempty"`
	Head      string `json:"head,omitempty"`
	Mergeable string `json:"mergeable,omitempty"`
}

// Checks counts the CI results of the PR's head.
type Checks struct {
	Head string `json:"head"`
	// Started is false when the forge has no check for the head yet.
	Started bool     `json:"started"`
	Total   int      `json:"total"`
	Passed  int      `json:"passed"`
	Failed  int      `json:"failed"`
	Pending int      `json:"pending"`
	Failing []string `json:"failing,omitempty"`
}

// BudgetUse is the step backs of one failure kind, against its budget.
// Used never shows above Max: the failure that found the budget spent is
// no step back, and Escalated says it stopped the issue.
type BudgetUse struct {
	Kind      string `json:"kind"`
	Used      int    `json:"used"`
	Max       int    `json:"max"`
	Escalated bool   `json:"escalated,omitempty"`
}

// Action is the latest thing done to the issue: a move in its history, or
// an Action of the controller's log in watch.yaml.
type Action struct {
	At   time.Time `json:"at"`
	By   string    `json:"by"`
	What string    `json:"what"`
}

// Recommendation is who acts next on the issue, and what they run.
type Recommendation struct {
	For Waiter `json:"for"`
	// Role is the agent's, when an agent acts next.
	Role stages.Role `json:"role,omitempty"`
	Run  []string    `json:"run,omitempty"`
	Why  string      `json:"why"`
}

// budgetKinds are the failure kinds the engine counts step backs of, in
// the order they are shown; any other kind an issue has counted follows.
var budgetKinds = []string{string(hooks.ClassCIFailed), string(hooks.ClassNoNewCI), string(hooks.ClassPollingTimeout), string(hooks.ClassCICancelled), string(hooks.ClassConflict)}

// statusBlock prints iss's status block.
func (a cmds) statusBlock(ctx context.Context, e *engine.Engine, iss *issues.Issue, asJSON bool) error {
	now := time.Now()
	b := blockOf(ctx, e, iss, now)
	if asJSON {
		return a.PrintJSON(b)
	}
	a.printBlock(b, now)
	return nil
}

// blockOf gathers iss's status: from its files, and its PR's from the
// forge.
func blockOf(ctx context.Context, e *engine.Engine, iss *issues.Issue, now time.Time) Block {
	b := Block{ID: iss.ID, Title: iss.Title, Flow: iss.Flow, Stage: iss.Stage, Escalated: iss.Escalated,
		EnteredAt: waiton.Entered(iss), Budgets: budgets(e.Config, iss)}
	b.ElapsedS = int64(now.Sub(b.EnteredAt) / time.Second)
	if iss.Breaker != nil {
		b.Breaker = *iss.Breaker
	}
	b.Breaker.State = cmp.Or(b.Breaker.State, issues.BreakerClosed)
	b.BreakerWarning = breakerWarning(e.Config, iss)
	if n, ok := e.Config.Node(iss.Stage); ok {
		b.Owner = render.Describe(n)
	}
	var poll *issues.Poll
	if w, err := e.Store.ReadWatch(iss.ID); err != nil {
		b.Warnings = append(b.Warnings, "watch.yaml: "+err.Error())
	} else if w.Poll != nil && w.Poll.PR == iss.PRNumber {
		poll = w.Poll
		b.Iteration, b.PollStatus, b.NextLookAt = poll.Iteration, poll.Status, poll.NextAt
	}
	wait := waiton.On(e.Config, iss, poll, waiton.LookAtAgent(ctx, e, iss.ID))
	b.WaitingOn, b.wait = wait.What, wait
	b.Recommendation = Recommendation{For: wait.Who, Role: wait.Role, Run: wait.Run, Why: wait.What}
	b.LatestAction = latestAction(iss, poll)
	if pending, err := e.Outbox(iss.ID).Pending(); err != nil {
		b.Warnings = append(b.Warnings, "outbox: "+err.Error())
	} else {
		b.Undelivered = len(pending)
	}
	if iss.PRNumber > 0 {
		b.PR, b.Checks, b.ForgeError = prState(ctx, e.Forge, iss)
	}
	return b
}

// prState reads the PR and the CI of its head from the forge: the checks
// it reports with the PR, which are recorded results on the local forge
// (a look never starts a CI run). A forge error is reported, not fatal.
func prState(ctx context.Context, f forge.Forge, iss *issues.Issue) (*BlockPR, *Checks, string) {
	b := &BlockPR{Number: iss.PRNumber, URL: iss.PRURL, Head: iss.HeadSHA}
	if f == nil {
		return b, nil, ""
	}
	ctx, cancel := context.WithTimeout(ctx, forgeLookTimeout)
	defer cancel()
	pr, err := f.PR(ctx, iss.PRNumber)
	if err != nil {
		return b, nil, fmt.Sprintf("reading PR #%d: %v", iss.PRNumber, err)
	}
	b.URL, b.State, b.Head, b.Mergeable = cmp.Or(pr.URL, b.URL), pr.State, cmp.Or(pr.HeadSHA, b.Head), pr.Mergeable
	sum := forge.Summarize(pr.Checks)
	c := &Checks{Head: b.Head, Started: sum.Total > 0, Total: sum.Total, Passed: sum.Passing, Failed: sum.Failing, Pending: sum.Pending}
	for _, ch := range sum.Failed {
		c.Failing = append(c.Failing, ch.Name)
	}
	return b, c, ""
}

// budgets are the step backs used per failure kind, against the budget
// the engine holds the issue to: the failing stage's
// on_failure.max_retries, else ci_polling.max_retries
// (conflict_handling.max_conflict_retries for conflicts). The failing
// stage is where the issue escalated, else where its latest step back
// came from, else its own.
func budgets(cfg *stages.Config, iss *issues.Issue) []BudgetUse {
	node, _ := cfg.Node(failingStage(iss))
	kinds := slices.Clone(budgetKinds)
	for _, k := range slices.Sorted(maps.Keys(iss.Attempts)) {
		if !slices.Contains(kinds, k) {
			kinds = append(kinds, k)
		}
	}
	out := make([]BudgetUse, len(kinds))
	for i, k := range kinds {
		out[i] = BudgetUse{Kind: k, Used: iss.Attempts[k], Max: policy.Budget(cfg, node, hooks.Class(k))}
	}
	if esc := iss.Escalated; esc != nil && esc.Kind == issues.EscalatedBudget {
		// The kind that escalated: the failure's, else (an issue
		// escalated before it was kept) the first one spent.
		spent := iss.Outputs[notice.OutClass]
		for i, u := range out {
			if u.Kind == spent || (spent == "" && u.Used >= u.Max) {
				out[i].Escalated = true
				break
			}
		}
	}
	for i := range out {
		// An issue that counted the failure that escalated as a step
		// back, or a budget lowered since, shows the budget spent.
		out[i].Used = min(out[i].Used, out[i].Max)
	}
	return out
}

// breakerWarning is the warning of iss's half-open breaker, at the
// thresholds of the stage it failed at; "" when it is not half-open.
func breakerWarning(cfg *stages.Config, iss *issues.Issue) string {
	if iss.Breaker == nil || iss.Breaker.State != issues.BreakerHalfOpen || iss.Escalated != nil {
		return ""
	}
	node, _ := cfg.Node(failingStage(iss))
	return breaker.HalfOpen(*iss.Breaker, breaker.Thresholds(cfg, node))
}

// failingStage is the stage whose budgets an issue's step backs count
// against: where it escalated, else where its last step back came from.
func failingStage(iss *issues.Issue) string {
	if iss.Escalated != nil && iss.Escalated.Stage != "" {
		return iss.Escalated.Stage
	}
	for _, h := range slices.Backward(iss.History) {
		if h.Kind == stages.MoveStepBack {
			return h.From
		}
	}
	return iss.Stage
}

// latestAction is the later of the issue's last history entry and the
// controller's last logged action.
func latestAction(iss *issues.Issue, poll *issues.Poll) *Action {
	var last *Action
	if n := len(iss.History); n > 0 {
		h := iss.History[n-1]
		last = &Action{At: h.At, By: h.Actor, What: waiton.HistoryText(h)}
	}
	if poll != nil && len(poll.Actions) > 0 {
		pa := poll.Actions[len(poll.Actions)-1]
		if last == nil || pa.At.After(last.At) {
			last = &Action{At: pa.At, By: string(engine.ActorController), What: pa.What}
		}
	}
	return last
}

func (a cmds) printBlock(b Block, now time.Time) {
	// Each value quotes stored text (reasons, check names, the forge's
	// answers): it is shown as one safe line.
	line := func(label, format string, args ...any) {
		fmt.Fprintf(a.Out, "  %-12s %s\n", label+":", cmdutil.SafeText(fmt.Sprintf(format, args...)))
	}
	fmt.Fprintf(a.Out, "issue %d: %s\n", b.ID, cmdutil.SafeTitle(b.Title))
	line("stage", "%s (flow %s), for %s", b.Stage, b.Flow, cmdutil.Age(time.Duration(b.ElapsedS)*time.Second))
	if b.Owner != "" {
		line("who acts", "%s", b.Owner)
	}
	line("waiting on", "%s", b.wait.Text(now))
	if b.Iteration > 0 {
		line("iteration", "%d; %s", b.Iteration, nextLook(b.NextLookAt, now))
	}
	if b.PR != nil {
		line("pr", "%s", prText(b.PR))
	}
	if b.PR != nil || b.ForgeError != "" {
		line("checks", "%s", checksText(b.Checks, b.ForgeError))
	}
	br := breakerText(b.Breaker)
	if b.Breaker.Fingerprint != "" {
		br += ", fingerprint " + b.Breaker.Fingerprint
	}
	line("breaker", "%s", br)
	if b.BreakerWarning != "" {
		line("warning", "%s", b.BreakerWarning)
	}
	line("budgets", "%s", budgetsText(b.Budgets))
	if la := b.LatestAction; la != nil {
		line("latest", "%s by %s: %s", la.At.Local().Format(time.DateTime), la.By, la.What)
	}
	if b.Undelivered > 0 {
		line("messages", "%d undelivered (`agenttree inbox %d`)", b.Undelivered, b.ID)
	}
	if esc := b.Escalated; esc != nil {
		line("escalated", "%s, %s: %s", esc.Kind, esc.At.Local().Format(time.DateTime), esc.Reason)
	}
	line("next", "%s", recommendationText(b.Recommendation))
	for _, w := range b.Warnings {
		line("warning", "%s", w)
	}
}

func nextLook(at, now time.Time) string {
	switch d := at.Sub(now); {
	case at.IsZero():
		return "no look planned"
	case d >= 0:
		return "next look in " + cmdutil.Age(d)
	default:
		return "next look due " + cmdutil.Age(-d) + " ago"
	}
}

func prText(pr *BlockPR) string {
	parts := []string{fmt.Sprintf("#%d", pr.Number)}
	for _, s := range []string{pr.State, pr.Mergeable, pr.URL} {
		if s != "" {
			parts = append(parts, s)
		}
	}
	if pr.Head != "" {
		parts = append(parts, "head "+gitx.ShortSHA(pr.Head))
	}
	return strings.Join(parts, ", ")
}

func checksText(c *Checks, forgeErr string) string {
	switch {
	case forgeErr != "":
		return "unknown: " + forgeErr
	case c == nil:
		return "unknown: no forge configured"
	case !c.Started:
		return "none yet on " + gitx.ShortSHA(c.Head) + " (CI has not started)"
	}
	s := fmt.Sprintf("%d passed, %d failed, %d pending of %d on %s", c.Passed, c.Failed, c.Pending, c.Total, gitx.ShortSHA(c.Head))
	if len(c.Failing) > 0 {
		s += " (failed: " + strings.Join(c.Failing, ", ") + ")"
	}
	return s
}

// budgetsText is "ci_failed 2/2 (then failed again: escalated), conflict
// 0/3": never a count above its budget.
func budgetsText(list []BudgetUse) string {
	parts := make([]string, len(list))
	for i, u := range list {
		parts[i] = fmt.Sprintf("%s %d/%d", u.Kind, u.Used, u.Max)
		if u.Escalated {
			parts[i] += " (then failed again: escalated)"
		}
	}
	return strings.Join(parts, ", ")
}

func recommendationText(r Recommendation) string {
	if r.For == WaiterNobody {
		return "nothing: the issue is " + r.Why
	}
	who := "a person"
	switch r.For {
	case WaiterAgent:
		who = fmt.Sprintf("the agent (%s), in its session", r.Role)
	case WaiterController:
		who = "the controller"
	}
	cmds := make([]string, len(r.Run))
	for i, c := range r.Run {
		cmds[i] = "`" + c + "`"
	}
	return fmt.Sprintf("for %s: %s", who, strings.Join(cmds, ", or "))
}
