package stages

// ParamType is the type a hook parameter accepts.
type ParamType string

const (
	ParamString   ParamType = "string"
	ParamTemplate ParamType = "template" // a string with {{placeholders}}
	ParamInt      ParamType = "int"
	ParamNumber   ParamType = "number" // an int or a float, as float64
	ParamBool     ParamType = "bool"
	ParamDuration ParamType = "duration" // seconds as a number, or "90s", "5m"
	ParamStageRef ParamType = "stage"    // a node of the pipeline
	ParamList     ParamType = "list"     // a list of strings
	// ParamEnvNames is a list of names of the controller's environment
	// variables that a hook passes to the repository's code (run's env):
	// the loader refuses what is not a name (package codeenv) and warns
	// of a name that looks like a credential.
	ParamEnvNames ParamType = "env_names"
	ParamEnum     ParamType = "enum"
	ParamAny      ParamType = "any"
)

// Param declares one parameter of a hook.
type Param struct {
	Name     string
	Type     ParamType
	Required bool
	Enum     []string // the allowed values of a ParamEnum
	Aliases  []string // other spellings, from the earlier tool
	// Default is the value a hook gets when the parameter is not given,
	// of the Go type the loader gives its Type (string, int, float64,
	// bool, time.Duration, []string); nil when there is none.
	Default any
	// Doc says in a line what the parameter does.
	Doc string
	// AtLeast is, for a ParamInt, the smallest value the loader accepts
	// (a count below zero means nothing); nil: any.
	AtLeast *int
	// Move is, for a ParamStageRef, how the hook sends an issue to the
	// stage the parameter names (default MoveRedirect). The stage machine
	// draws its edges from it.
	Move Move
}

// MoveKind is how the hook moves an issue to the stage p names.
func (p Param) MoveKind() Move {
	if p.Move == "" {
		return MoveRedirect
	}
	return p.Move
}

// HookSpec is what the config loader needs to know about a hook: its
// parameters and the variables it provides to later hooks and messages.
type HookSpec struct {
	Name string
	// Doc says in a sentence or two what the hook does, for the
	// reference documentation and the JSON Schema.
	Doc string
	// Example is an entry of a hook list as a person writes it, in YAML
	// (`- file_exists: review.md`), for the reference documentation.
	Example string
	Params  []Param
	// Main is the parameter a scalar value sets (`file_exists: review.md`).
	Main string
	// Outputs are the message variables the hook provides when it runs.
	Outputs []string
	// OutputsParam names a list parameter whose values the hook also
	// provides as outputs (`run: {outputs: [coverage]}`).
	OutputsParam string
	// OneOf lists groups of alternative parameters: exactly one of each
	// group must be given (`contains` takes `text` or `values`).
	OneOf [][]string
	// Approval marks a hook whose pass means a person approved the PR at
	// its current head: the engine runs it when a person approves again.
	Approval bool
	// Waits marks a hook that polls something outside agenttree (CI) until
	// it has a verdict, one poll per call: `agenttree pr wait` drives it.
	Waits bool
	// Resolves marks a hook that can remove the cause of a failure (a
	// rebase): in an on_failure list, its pass ends the list and the
	// failed hook runs again.
	Resolves bool
	// Conflicts marks a hook that finds merge conflicts: it takes
	// on_conflict beside on_failure.
	Conflicts bool
	// Watches marks a hook that asks the controller to watch the issue's
	// PR in the background while an agent or a person works
	// (poll_pr_status): it never blocks a move itself.
	Watches bool
	// Pushes marks a hook that pushes the branch from the work
	// tree it runs in: with state.nodes, one must run in an agent's stage.
	Pushes bool
	// Check, when set, checks an entry's parameters once the loader has
	// read them (those given with a valid value, under their canonical
	// names), for what their types cannot say: where `run`'s placeholders
	// stand. An error fails the config; its message continues the
	// sentence "hook NAME ...", as in "parameter `command`: ...". Each
	// error of an errors.Join is reported on its own.
	Check func(params map[string]any) error
}

// Moves reports whether the hook may send an issue somewhere with move m
// through one of its stage parameters.
func (s HookSpec) Moves(m Move) bool {
	for _, p := range s.Params {
		if p.Type == ParamStageRef && p.MoveKind() == m {
			return true
		}
	}
	return false
}

// Param finds a parameter by name or alias, returning its canonical name.
func (s HookSpec) Param(name string) (Param, bool) {
	for _, p := range s.Params {
		if p.Name == name {
			return p, true
		}
		for _, a := range p.Aliases {
			if a == name {
				return p, true
			}
		}
	}
	return Param{}, false
}

// HookCatalog is the set of hooks a config may name. The hooks package
// provides the real one; stages only needs to know names and parameters.
type HookCatalog interface {
	// Hook looks a hook up by name or alias.
	Hook(name string) (HookSpec, bool)
	// HookNames lists every hook name, for suggestions.
	HookNames() []string
	// Variables lists the variables every issue provides to conditions
	// and messages (issue_id, issue_title, ...).
	Variables() []string
}
