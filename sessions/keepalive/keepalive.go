// Package keepalive decides, each tick, what the controller does for an
// issue's agent (docs/ARCHITECTURE.md §9): leave it, restart it, nudge
// it, or call a person. The decision is a pure function of what the
// controller sees of the session and its issue; the record it returns is
// what the controller persists, so a controller killed at any moment
// picks up where it stopped, and every count in it bounds a loop. It
// lives apart from sessions, which starts and looks at agents, because
// it decides and does nothing.
package keepalive

import (
	"fmt"
	"slices"
	"time"

	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/sessions"
	"github.com/agenttree/agenttree/stages"
)

// Situation is what the controller knows of an issue's agent at a tick.
type Situation struct {
	Now    time.Time
	Record sessions.Record
	// Role is how the record's role keeps its agents; nil: `roles:` has
	// no entry for it, and nothing is kept alive.
	Role *stages.RoleSessions
	Pane sessions.PaneState
	// Exit is why a dead or missing agent ended, Status (-1: unknown)
	// and LastLine what its pane said; Screen digests what a live pane shows.
	Exit     sessions.ExitKind
	Status   int
	LastLine string
	Screen   string
	// Finished: the issue is at a terminal stage; Escalated: it waits
	// for a person.
	Finished, Escalated bool
	// Told: the record's role is the one the issue's messages go to
	// (AgentRole); AtOwnStage: the issue is at a stage of that role,
	// where its agent works rather than waits.
	Told, AtOwnStage bool
	// Progress is when the issue last moved (its latest history entry):
	// a `next`, a step back, a person's resume.
	Progress time.Time
}

// Action is what the controller does for an issue's agent.
type Action string

const (
	// Leave: nothing, now.
	Leave Action = ""
	// Save: only the record changes (the screen changed, a rate-limit
	// wait began).
	Save Action = "save"
	// Restart starts Decision.Record.Agent again in the same worktree.
	Restart Action = "restart"
	// Nudge tells the agent it seems stalled.
	Nudge Action = "nudge"
	// Escalate stops the issue for a person.
	Escalate Action = "escalate"
)

// Decision is what Decide decided: the action, the record as it is to be
// saved (or started with), and why, in words for the agent, the log or a
// person.
type Decision struct {
	Action Action
	Record sessions.Record
	// Resume: restart with the agent's resume_command (its conversation
	// continues), not its command.
	Resume bool
	Reason string
}

// Bounds of the waits on a rate limit: the first wait, the longest, and
// the waits in a row before a person is called.
const (
	rateLimitWait    = time.Minute
	rateLimitMaxWait = 30 * time.Minute
	rateLimitWaits   = 6
)

// RateLimitWait is the wait before the n-th restart (from 0) after a
// rate limit: doubling from a minute, at most half an hour.
func RateLimitWait(n int) time.Duration {
	return min(rateLimitWait<<min(n, 10), rateLimitMaxWait)
}

// Decide is what the controller does for the agent of s. A person's stop,
// a finished or escalated issue, a role the issue has left, or one with
// no `roles:` entry: nothing.
func Decide(s Situation) Decision {
	rec := s.Record
	if !rec.Stopped.IsZero() || s.Finished || s.Escalated || !s.Told || s.Role == nil {
		return Decision{Record: rec}
	}
	if s.Pane == sessions.PaneLive {
		return decideLive(s, rec)
	}
	return decideExit(s, rec)
}

// decideExit is what follows an agent's end: authentication calls a
// person, a rate limit waits, anything else restarts it while its budget
// lasts, then the role's fallback, then a person.
func decideExit(s Situation, rec sessions.Record) Decision {
	if s.Progress.After(rec.Started) {
		// The budgets count failures without progress in between.
		rec.Restarts, rec.RateLimited = 0, 0
	}
	rec.LastExit = s.Exit
	why := exitReason(s)
	switch s.Exit {
	case sessions.ExitAuth:
		return Decision{Action: Escalate, Record: rec, Reason: fmt.Sprintf(
			"%s; its credentials are refused, and a restart cannot fix that: fix them, then `agenttree start %d --restart` and `agenttree resume %d --reason TEXT`",
			why, rec.Issue, rec.Issue)}
	case sessions.ExitRateLimit:
		return decideRateLimit(s, rec, why)
	}
	rec.RateLimited = 0
	if rec.Restarts < s.Role.MaxRestarts {
		rec.Restarts++
		return Decision{Action: Restart, Record: rec, Resume: true,
			Reason: fmt.Sprintf("%s; restart %d of %d", why, rec.Restarts, s.Role.MaxRestarts)}
	}
	if next, ok := fallback(s.Role, rec); ok {
		spent := rec.Agent
		rec.Agent, rec.Restarts = next, 0
		rec.Fallbacks++
		return Decision{Action: Restart, Record: rec,
			Reason: fmt.Sprintf("%s; %s spent its %d restarts, so %s takes over (fallback %s)", why, spent, s.Role.MaxRestarts, next, s.Role.Fallback)}
	}
	return Decision{Action: Escalate, Record: rec, Reason: fmt.Sprintf(
		"%s, after %d restarts and the role's fallback (%s); see its last output with `agenttree attach %d`, fix the cause, then `agenttree start %d --restart` (or `--agent NAME`) and `agenttree resume %d --reason TEXT`",
		why, rec.Restarts, s.Role.Fallback, rec.Issue, rec.Issue, rec.Issue)}
}

// decideRateLimit waits, longer each time, then restarts the same agent;
// a limit that does not lift calls a person.
func decideRateLimit(s Situation, rec sessions.Record, why string) Decision {
	switch {
	case rec.RetryAt.IsZero() && rec.RateLimited >= rateLimitWaits:
		return Decision{Action: Escalate, Record: rec, Reason: fmt.Sprintf(
			"%s, %d times in a row; check the account's limits, then `agenttree start %d --restart` and `agenttree resume %d --reason TEXT`",
			why, rec.RateLimited, rec.Issue, rec.Issue)}
	case rec.RetryAt.IsZero():
		wait := RateLimitWait(rec.RateLimited)
		rec.RetryAt = s.Now.Add(wait).UTC().Truncate(time.Second)
		rec.RateLimited++
		return Decision{Action: Save, Record: rec, Reason: fmt.Sprintf("%s; restarting it in %s", why, wait)}
	case s.Now.Before(rec.RetryAt):
		return Decision{Record: rec}
	}
	rec.RetryAt = time.Time{}
	return Decision{Action: Restart, Record: rec, Resume: true, Reason: why + "; the wait is over"}
}

// fallback is the agent that replaces rec's once it spent its restarts:
// the role's next (next_in_list), or the same one afresh, once
// (same_agent).
func fallback(role *stages.RoleSessions, rec sessions.Record) (string, bool) {
	switch role.Fallback {
	case stages.FallbackNextInList, "":
		i := slices.Index(role.Agents, rec.Agent)
		if i+1 < len(role.Agents) && role.Agents[i+1] != rec.Agent {
			return role.Agents[i+1], true
		}
	case stages.FallbackSameAgent:
		return rec.Agent, rec.Fallbacks == 0
	}
	return "", false
}

// exitReason says how s's agent ended.
func exitReason(s Situation) string {
	who := fmt.Sprintf("the %s agent %s of issue %d", s.Record.Role, s.Record.Agent, s.Record.Issue)
	last := ""
	if s.LastLine != "" {
		last = fmt.Sprintf(" (its last line: %q)", s.LastLine)
	}
	switch s.Exit {
	case sessions.ExitGone:
		return fmt.Sprintf("%s is gone: its tmux session %s no longer exists (a reboot, or the session was killed)", who, s.Record.Session)
	case sessions.ExitTimeout:
		return fmt.Sprintf("%s was stopped for taking too long (exit status %d)%s", who, s.Status, last)
	case sessions.ExitAuth:
		return fmt.Sprintf("%s could not authenticate (exit status %d)%s", who, s.Status, last)
	case sessions.ExitRateLimit:
		return fmt.Sprintf("%s hit a rate limit (exit status %d)%s", who, s.Status, last)
	}
	if s.Status < 0 {
		return fmt.Sprintf("%s exited%s", who, last)
	}
	return fmt.Sprintf("%s exited with status %d%s", who, s.Status, last)
}

// decideLive notes a change of screen, and nudges an agent whose screen
// has not changed and whose issue has not moved for the role's
// stall_after, then calls a person when that happens again.
func decideLive(s Situation, rec sessions.Record) Decision {
	d := Decision{Record: rec}
	if rec.Screen != s.Screen {
		d.Record.Screen, d.Record.ChangedAt = s.Screen, s.Now.UTC()
		return Decision{Action: Save, Record: d.Record}
	}
	if !s.AtOwnStage || s.Role.StallAfter <= 0 {
		return d
	}
	progress := latest(rec.Started, s.Progress)
	quiet := latest(progress, rec.ChangedAt)
	if s.Now.Sub(quiet) < s.Role.StallAfter {
		return d
	}
	idle := s.Now.Sub(quiet).Truncate(time.Second)
	if rec.NudgedAt.IsZero() || rec.NudgedAt.Before(progress) {
		d.Record.NudgedAt = s.Now.UTC()
		return Decision{Action: Nudge, Record: d.Record, Reason: fmt.Sprintf(
			"Your pane has not changed for %s and issue %d has not moved. If you are stuck, say what blocks you; if you are done, run `agenttree next`.",
			idle, rec.Issue)}
	}
	return Decision{Action: Escalate, Record: rec, Reason: fmt.Sprintf(
		"the %s agent %s of issue %d shows no change for %s, even after a nudge; look at it with `agenttree attach %d`, then `agenttree resume %d --reason TEXT` to let it carry on, or `agenttree start %d --restart` first",
		rec.Role, rec.Agent, rec.Issue, idle, rec.Issue, rec.Issue, rec.Issue)}
}

func latest(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// Situate is the Situation of seen's agent on iss at now, for Decide.
func Situate(cfg *stages.Config, iss *issues.Issue, seen sessions.Seen, now time.Time) Situation {
	rec := *seen.Record
	s := Situation{Now: now, Record: rec, Pane: seen.Pane, Status: seen.Status, Screen: seen.Screen,
		LastLine: sessions.LastLine(seen.Output), Escalated: iss.Escalated != nil, Told: sessions.AgentRole(cfg, iss) == rec.Role}
	if rs, ok := cfg.Sessions(rec.Role); ok {
		s.Role = rs
	}
	if node, ok := cfg.Node(iss.Stage); ok {
		s.Finished = node.Terminal() != stages.TerminalNone
		s.AtOwnStage = !node.Controller() && !node.HumanReview() && node.Role() == rec.Role
	}
	switch seen.Pane {
	case sessions.PaneMissing:
		s.Exit = sessions.ExitGone
	case sessions.PaneDead:
		s.Exit = sessions.Classify(seen.Status, seen.Output)
	}
	if n := len(iss.History); n > 0 {
		s.Progress = iss.History[n-1].At
	}
	return s
}
