package stages

// SandboxKind is where agents run, apart from the state (docs/SECURITY.md).
type SandboxKind string

const (
	// SandboxNone: agents run as the state directory's owner (advisory).
	SandboxNone SandboxKind = "none"
	// SandboxUser: agents run as another OS user (Sandbox.Name).
	SandboxUser SandboxKind = "user"
	// SandboxDocker and SandboxPodman: agents run in containers of the
	// image Sandbox.Name.
	SandboxDocker SandboxKind = "docker"
	SandboxPodman SandboxKind = "podman"
)

// Sandbox is the config's `sandbox:` (none | user:NAME | docker:IMAGE |
// podman:IMAGE).
type Sandbox struct {
	Kind SandboxKind
	// Name is the OS user or the container image.
	Name string
}

// Enforced reports whether the sandbox keeps agents from the state's
// files (another user, a container), rather than only holding their
// commands to the rules.
func (s Sandbox) Enforced() bool { return s.Kind != "" && s.Kind != SandboxNone }

func (s Sandbox) String() string {
	if !s.Enforced() {
		return string(SandboxNone)
	}
	return string(s.Kind) + ":" + s.Name
}

// AgentCreate is the config's `agent_create:`: what an agent may choose
// when it creates an issue. The flow and the variables decide which gates
// an issue meets (a shorter flow, a condition that skips a review), so by
// default an agent chooses neither: the default flow, no variables.
type AgentCreate struct {
	// Flows agents may create issues in; empty: the default flow only.
	Flows []string
	// Vars agents may set; empty: none.
	Vars []string
	Pos  Pos
}
