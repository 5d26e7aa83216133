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

// Config is a loaded, validated pipeline. Its lookups answer from indexes
// built as it is assembled (AddStage, AddSubstage, Flow.Add), so a loaded
// Config is not to be changed.
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
	Timeout       time.Duration
	PollInterval  time.Duration
	MaxInterval   time.Duration
	NewRunTimeout time.Duration
	MaxRetries    int
}

// ConflictHandling says what to do when a PR conflicts with its base.
type ConflictHandling struct {
	AutoRebase         bool
	NotifyOnRebase     bool
	MaxConflictRetries int
}

// GitHub names the repository when origin does not (forge: github).
type GitHub struct {
	// Repo is "owner/name"; empty means read it from the origin remote.
	Repo string
	// Host is github.com or a GitHub Enterprise host.
	Host string
}

// CI configures the local forge's CI command.
type CI struct {
	Command string
	// Timeout bounds one CI run (default 30 minutes).
	Timeout time.Duration
}

// Defaults is a config with every setting at its default and no stages:
// what a key left out of .agenttree.yaml means.
func Defaults() *Config {
	return &Config{
		Forge:         ForgeLocal,
		DefaultBranch: "main",
		CIPolling: CIPolling{Timeout: 600 * time.Second, PollInterval: 30 * time.Second,
			MaxInterval: 300 * time.Second, NewRunTimeout: 1800 * time.Second, MaxRetries: 5},
		Conflicts: ConflictHandling{AutoRebase: true, NotifyOnRebase: true, MaxConflictRetries: 3},
	}
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
}

// OnFailure is a stage's answer to a failed hook that asks for a step back.
type OnFailure struct {
	Pos        Pos
	StepBackTo string
	Message    string
}

// FailurePolicy is a per-hook override of what a failure does.
type FailurePolicy struct {
	Action FailureAction
	// Target is the node of ActionStepBackTo.
	Target string
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
