// Package stages is the pipeline .agenttree.yaml declares: the stages,
// their hooks, the flows that order them, and the conditions that skip
// them. It knows nothing of issues; the engine asks it questions about a
// pipeline. Package stages/load reads a file into it.
package stages

import "time"

// Form says which spelling a config file was written in.
type Form string

const (
	// Canonical is the list form: `stages:` is a list of `name:` items.
	Canonical Form = "canonical"
	// Compatible is the map form of the earlier Python agenttree.
	Compatible Form = "compatible"
)

// ForgeKind says where an issue's PRs live.
type ForgeKind string

const (
	ForgeGitHub ForgeKind = "github"
	// ForgeLocal keeps PRs beside a bare repository, for offline use.
	ForgeLocal ForgeKind = "local"
)

// Role is who acts in a stage. Three have a meaning of their own; any
// other names an agent role (reviewer, tester, ...).
type Role string

const (
	RoleDeveloper  Role = "developer"
	RoleController Role = "controller"
	RoleHuman      Role = "human"
)

// Agent reports whether r is an agent's role: not a person's (human, or
// the earlier tool's manager), nor the controller's, nor unset.
func (r Role) Agent() bool {
	switch r {
	case "", RoleController, RoleHuman, "manager":
		return false
	}
	return true
}

// Terminal says how a final stage ends an issue; "" is not final.
type Terminal string

const (
	TerminalNone       Terminal = ""
	TerminalCompletion Terminal = "completion"
	TerminalAbandon    Terminal = "abandon"
)

// FailureAction is what a hook's failure does (a hook entry's on_failure).
type FailureAction string

const (
	// ActionStepBack sends the issue to the stage's on_failure.step_back_to.
	ActionStepBack FailureAction = "step_back"
	// ActionStepBackTo sends it to the entry's own target.
	ActionStepBackTo FailureAction = "step_back_to"
	ActionEscalate   FailureAction = "escalate"
	ActionFail       FailureAction = "fail"
	// ActionIgnore turns the failure into a warning.
	ActionIgnore FailureAction = "ignore"
)

// FailureActions lists the actions in the order they are documented.
func FailureActions() []FailureAction {
	return []FailureAction{ActionStepBack, ActionStepBackTo, ActionEscalate, ActionFail, ActionIgnore}
}

// Move is a kind of edge of the stage machine: how an issue gets from one
// node to another.
type Move string

const (
	MoveAdvance  Move = "advance"
	MoveApprove  Move = "approve"
	MoveStepBack Move = "step_back"
	MoveRedirect Move = "redirect"
	MoveRollback Move = "rollback"
	MoveEscalate Move = "escalate"
	MoveResume   Move = "resume"
)

// Moves a person makes by hand, outside the stage machine's edges: they
// are history kinds, checked only to stay inside the flow.
const (
	// MoveReject sends work at a human review back, with a message.
	MoveReject Move = "reject"
	// MoveSkip advances past a stage without its gates.
	MoveSkip Move = "skip"
	// MoveAbort sends the issue to its flow's abandon stage.
	MoveAbort Move = "abort"
	// MoveManual puts the issue at any stage of its flow.
	MoveManual Move = "move"
)

// Config is a loaded, validated pipeline. Its lookups answer from indexes
// built as it is assembled (AddStage, AddSubstage, Flow.Add), so a loaded
// Config is not to be changed. The settings' keys, defaults and bounds
// are declared in package stages/settings (docs/CONFIG.md).
type Config struct {
	// File is the path the config was loaded from.
	File string
	Form Form

	Project          string
	DefaultBranch    string
	Forge            ForgeKind
	AllowSelfApprove bool
	CIPolling        CIPolling
	Conflicts        ConflictHandling
	CI               CI
	GitHub           GitHub
	Events           Events
	Controller       Controller
	CircuitBreaker   CircuitBreaker
	Tmux             Tmux
	Notify           Notify
	Sandbox          Sandbox
	AgentCreate      AgentCreate
	State            State

	// Agents and Roles say which programs work on issues, in sessions of
	// which roles; Worktrees where.
	Agents    []*Agent
	Roles     []*RoleSessions
	Worktrees Worktrees

	Stages []*Stage
	// Flows in the order they were declared; DefaultFlow names the one new
	// issues use.
	Flows       []*Flow
	DefaultFlow string

	// Warnings found while loading; errors make loading fail instead.
	Warnings []Diagnostic

	// byName indexes Stages; see AddStage.
	byName map[string]*Stage
}

// CIPolling bounds how the controller waits for CI.
type CIPolling struct {
	Timeout      time.Duration
	PollInterval time.Duration
	// MinInterval is the floor an event halves the interval to.
	MinInterval   time.Duration
	MaxInterval   time.Duration
	NewRunTimeout time.Duration
	MaxRetries    int
	// OnFailure is what a CI failure does where the hook that waits for
	// CI has no on_failure of its own (and a watch has no on_ci_failure):
	// an action, nil for the stage's on_failure (`ci_polling.on_failure`).
	OnFailure *FailurePolicy
}

// ConflictHandling says what to do when a PR conflicts with its base.
type ConflictHandling struct {
	AutoRebase         bool
	NotifyOnRebase     bool
	MaxConflictRetries int
}

// Controller configures `agenttree controller` (`controller:`).
type Controller struct {
	// Interval is the tick (interval_s).
	Interval time.Duration
	// Concurrency bounds the issues worked on at once.
	Concurrency int
}

// CircuitBreaker stops an issue that fails without progress
// (`circuit_breaker:`): closed, half-open after HalfOpenAfter failures
// without progress, open (escalated) after NoProgress failures without
// progress or SameError in a row with the same failure. A stage's own
// (Settings.CircuitBreaker) holds 0 where it keeps the top level's.
type CircuitBreaker struct {
	HalfOpenAfter int
	NoProgress    int
	SameError     int
}

// Tmux says where agents' sessions are (`tmux:`).
type Tmux struct {
	// Session is the template of an agent's session name.
	Session string
	// Socket is the tmux server's socket path, absolute (the file gives
	// it relative to its own directory); empty: the default server.
	Socket string
	// Manager is the session of the person running the pipeline, shown
	// (never typed) what they are needed for; empty: nobody is told by
	// tmux.
	Manager string
}

// Notify says how people are told they are needed (`notify:`).
type Notify struct {
	// Command is a shell command run with the event as JSON on stdin.
	Command string
}

// GitHub names the repository when origin does not (forge: github).
type GitHub struct {
	// Repo is "owner/name"; empty means read it from the origin remote.
	Repo string
	// Host is github.com or a GitHub Enterprise host.
	Host string
}

// EventsMode is how the GitHub forge hears of changes (`events.mode`).
type EventsMode string

const (
	// EventsPoll hears of nothing: the controller polls (the default).
	EventsPoll EventsMode = "poll"
	// EventsForward runs `gh webhook forward` to a receiver on loopback.
	EventsForward EventsMode = "gh-forward"
	// EventsWebhook keeps a repository webhook delivering to the person's
	// own public URL.
	EventsWebhook EventsMode = "webhook"
)

// Events says how the GitHub forge tells the controller of PR changes as
// they happen (`events:`, docs/CONFIG.md). Each change only makes the
// controller look again sooner: polling stays the source of truth.
type Events struct {
	Mode EventsMode
	// URL is the public URL GitHub delivers to (webhook mode).
	URL string
	// Listen is the local address the receiver listens on.
	Listen string
	// SecretFile holds the HMAC secret of webhook mode, relative to the
	// config file; empty: one is made under the state directory. The
	// secret is never in the config itself nor on a command line.
	SecretFile string
	// ForwardCommand is the program gh-forward mode runs, with its
	// leading arguments; empty: gh webhook forward.
	ForwardCommand []string
}

// CI configures the local forge's CI command.
type CI struct {
	Command string
	// Timeout bounds one CI run (default 30 minutes).
	Timeout time.Duration
	// MaxParallel bounds the runs going at once; 0: no bound.
	MaxParallel int
	// Env names the variables of the controller's environment the command
	// gets besides those every program needs; it gets no other, since the
	// agents' code reads what it gets (package codeenv).
	Env []string
}

// Stage is one top-level stage.
type Stage struct {
	Name      string
	Pos       Pos
	Substages []*Substage
	Settings

	// byName indexes Substages; see AddSubstage.
	byName map[string]*Substage
}

// Substage is a step inside a stage. Role and condition are inherited from
// the stage unless the substage sets its own.
type Substage struct {
	Name  string
	Pos   Pos
	Stage *Stage
	Settings
}

// Settings are the keys a stage and a substage share.
type Settings struct {
	Role           Role
	HumanReview    bool
	ParkingLot     bool
	Terminal       Terminal
	RedirectOnly   bool
	Condition      *Condition
	Output         string
	Skill          string
	PreCompletion  []*HookEntry
	PostStart      []*HookEntry
	PostCompletion []*HookEntry
	OnFailure      *OnFailure
	// CircuitBreaker is the node's own thresholds over the top level's
	// (a stage's `circuit_breaker:`), nil for none.
	CircuitBreaker *CircuitBreaker
}

// OnFailure is a stage's answer to a failed hook: a step back (for the
// hooks the controller runs, and those whose own on_failure says
// step_back), with a message, bounded by MaxRetries step backs of one
// failure kind before a person is called.
type OnFailure struct {
	Pos        Pos
	StepBackTo string
	Message    string
	// MaxRetries is 0 when unset: the ci_polling / conflict_handling
	// budget of the failure's kind applies.
	MaxRetries int
}

// FailurePolicy is a per-hook override of what a failure does: the hooks
// of Steps run first, in order (a message sent, a rebase tried), then
// Action. A step whose hook Resolves failures and passes ends the policy:
// the failure is dealt with, and the hook that failed runs again.
type FailurePolicy struct {
	Pos   Pos
	Steps []*HookEntry
	// Action is what the failure does after Steps; "" with Steps set means
	// the failure stands (ActionFail).
	Action FailureAction
	// Target is the node of ActionStepBackTo.
	Target string
	// Message is what the agent is told with the step back, a template
	// (`{step_back_to: STAGE, message: ...}`); "" tells it the failure.
	Message string
}

// HookEntry is one hook call in a stage's hook list.
type HookEntry struct {
	Name   string
	Pos    Pos
	Params map[string]any

	Optional  bool
	Timeout   time.Duration
	Retries   int
	When      *Condition
	Context   string
	OnFailure *FailurePolicy
	// OnConflict overrides OnFailure for a conflict (check_conflicts'
	// on_conflict, in the same forms).
	OnConflict *FailurePolicy
	// OnCIFailure is what a CI failure a watching hook sees does
	// (poll_pr_status' on_ci_failure, in the forms of on_failure).
	OnCIFailure *FailurePolicy

	// Unsupported marks a hook name of the earlier tool that agenttree does
	// not implement (compatible form only): it is reported, never run.
	Unsupported bool
}

// Label names the entry for messages: its context label if set.
func (h *HookEntry) Label() string {
	if h.Context != "" {
		return h.Context
	}
	return h.Name
}

// Flow is an ordered list of nodes. A flow built by Add answers Index
// from an index, so a loaded flow's Nodes are not to be changed.
type Flow struct {
	Name  string
	Pos   Pos
	Nodes []*Node

	// index maps each node's path to its position; see Add.
	index map[string]int
}

// Paths lists the flow's node paths in order.
func (f *Flow) Paths() []string {
	out := make([]string, len(f.Nodes))
	for i, n := range f.Nodes {
		out[i] = n.Path
	}
	return out
}
