package trustcmd

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/agenttree/agenttree/internal/identity"
	"github.com/agenttree/agenttree/internal/statedir"
	"github.com/agenttree/agenttree/sessions/tokens"
	"github.com/agenttree/agenttree/stages"
)

// Deployment is how agents are kept apart from the state (docs/SECURITY.md).
type Deployment string

const (
	DeployContainers Deployment = "containers"
	DeployOtherUser  Deployment = "another OS user"
	DeploySameUser   Deployment = "same user"
)

// caller is who runs doctor, to agenttree: a person, or an agent and in
// which deployment it is itself.
type caller struct {
	// why says what makes it an agent: the operating system's word first,
	// then its environment's. None: a person.
	why []string
	// deployment is the agent's own: how the operating system keeps it
	// from the state (not what the config says agents get).
	deployment Deployment
	how        string
}

func (c caller) person() bool { return len(c.why) == 0 }

// whoCalls tells whether this process is an agent, from the operating
// system (another user than the state directory's owner, another mount
// namespace than its host's) and from its environment (a session token,
// an agent's role, the controller's socket): the environment only lowers
// authority, so any of them makes an agent (docs/SECURITY.md).
func (a cmds) whoCalls(stateDir string, owner int) caller {
	var c caller
	self := identity.Self(statedir.Layout{Root: stateDir}.HostNamespace())
	switch {
	case self.Container:
		c.why = append(c.why, "it runs in a container ("+self.Why+")")
		c.deployment, c.how = DeployContainers, "another mount namespace than the state directory's host"
	case self.UID != owner && self.UID != 0:
		c.why = append(c.why, fmt.Sprintf("its user, %s, is not the state directory's owner, %s", statedir.UserName(self.UID), statedir.UserName(owner)))
		c.deployment, c.how = DeployOtherUser, "another OS user than the state directory's owner"
	}
	for _, name := range []string{tokens.TokenEnv, tokens.TokenFileEnv} {
		if a.Getenv(name) != "" {
			c.why = append(c.why, "it holds a session token ("+name+")")
		}
	}
	if role := stages.Role(a.Getenv("AGENTTREE_ROLE")); role.Agent() {
		c.why = append(c.why, fmt.Sprintf("AGENTTREE_ROLE names the agent role %q", role))
	}
	if a.Getenv("AGENTTREE_CONTAINER") == "1" {
		c.why = append(c.why, "AGENTTREE_CONTAINER=1")
	}
	socket := a.Getenv("AGENTTREE_SOCKET")
	if socket != "" {
		c.why = append(c.why, "AGENTTREE_SOCKET is set: its commands are requests to the controller")
	}
	if c.person() || c.deployment != "" {
		return c
	}
	// An agent by its environment alone. A container's agent gets the
	// controller's socket and no state directory; whatever else, the
	// operating system sees the state directory's owner (or root).
	if _, err := os.Stat(stateDir); socket != "" && errors.Is(err, fs.ErrNotExist) {
		c.deployment, c.how = DeployContainers, "the controller's socket (AGENTTREE_SOCKET) and no state directory, as an agent's container has"
		return c
	}
	c.deployment, c.how = DeploySameUser, "the state directory's owner's user: only its environment makes it an agent"
	return c
}

// guarantees says what the deployment c is in holds it to; sandbox is
// the agents' user the config names, if it does.
func (c caller) guarantees(sandbox string) string {
	switch c.deployment {
	case DeployContainers:
		return "enforced: this process reaches the state only through the controller's socket; the controller knows it " +
			"for an agent from the kernel and answers only for its session's issue and role, under the repository's config"
	case DeployOtherUser:
		return "enforced: this process's user may write the stage documents and nothing else of the state (while doctor " +
			"finds nothing writable by others); its commands are requests to the controller, which holds them to its " +
			"session's issue and role, under the repository's config"
	}
	g := advisory
	if sandbox != "" {
		g = "the repository's config says agents run as " + sandbox + ", but this one runs as the state directory's owner. " + g
	}
	return g
}

// configured is the deployment the repository's config gives its agents.
func configured(cfg *stages.Config) (Deployment, string) {
	switch cfg.Sandbox.Kind {
	case stages.SandboxUser:
		return DeployOtherUser, "enforced: agents run as " + cfg.Sandbox.Name + ", who can write the stage documents " +
			"and nothing else of the state; their commands are requests to the controller, which holds them to the " +
			"repository's config, their session's issue and role"
	case stages.SandboxDocker, stages.SandboxPodman:
		return DeployContainers, "enforced: agents run in " + cfg.Sandbox.String() + " containers that get their worktree, " +
			"their documents and the controller's socket, nothing else of the state"
	}
	return DeploySameUser, advisory
}

const advisory = "advisory: agents that run as the state directory's owner can write its files. " +
	"The engine holds their commands to the rules (an agent cannot approve, leave a review, move a controller stage, " +
	"act on another issue, or name another config), and the hash chain of every issue's events catches a hand edit " +
	"(`agenttree verify`), but a process of that user that sets no agent variables, or recomputes the chain, is not " +
	"stopped. Set `sandbox: user:NAME` (agents as another OS user) or run them in containers to enforce it (docs/SECURITY.md)"
