// Package act is the vocabulary of a command on an issue: who acts
// (Actor), whether they may act where the issue stands (Admit), and what
// the command came to: the people's report (Result) and, beside it, the
// Outcome the controller decides from. The engine makes them; the CLI,
// the agent's API and the controller read them without the engine's
// workings (docs/ARCHITECTURE.md).
package act

import (
	"fmt"

	"github.com/agenttree/agenttree/stages"
)

// ActorKind says whether an agent, a person or the controller acts.
type ActorKind string

const (
	ActorAgent      ActorKind = "agent"
	ActorHuman      ActorKind = "human"
	ActorController ActorKind = "controller"
)

// Actor is who runs a command.
type Actor struct {
	Kind ActorKind
	// Role is the agent's role (developer, reviewer, ...); empty otherwise.
	Role stages.Role
	// Request is the id of the agent's request to the controller this
	// change answers, recorded in the history so a retry is recognised.
	Request string
}

func (a Actor) String() string {
	if a.Kind == ActorAgent {
		return "agent (" + string(a.Role) + ")"
	}
	return string(a.Kind)
}

// ActorFromEnv is who the environment says acts: AGENTTREE_ROLE naming an
// agent role, AGENTTREE_CONTAINER=1 or a session token (AGENTTREE_TOKEN,
// or AGENTTREE_TOKEN_FILE naming the file holding it)
// is an agent; otherwise a human. The environment can only lower
// authority: it is asked only of a process the operating system already
// takes for a person (cmd/agenttree's remote), which may act as an agent
// to try things, never the other way round.
func ActorFromEnv(getenv func(string) string) Actor {
	role := stages.Role(getenv("AGENTTREE_ROLE"))
	// A session token is an agent's, whatever else the environment says.
	container := getenv("AGENTTREE_CONTAINER") == "1" || getenv("AGENTTREE_TOKEN") != "" || getenv("AGENTTREE_TOKEN_FILE") != ""
	switch {
	case role.Agent():
		return Actor{Kind: ActorAgent, Role: role}
	case role == stages.RoleController && container:
		// A container is never the host: it keeps the agent's limits.
		return Actor{Kind: ActorAgent, Role: role}
	case role == stages.RoleController:
		return Actor{Kind: ActorController}
	case container:
		return Actor{Kind: ActorAgent, Role: stages.RoleDeveloper}
	}
	return Actor{Kind: ActorHuman}
}

// WaitReason says why actor may not move an issue out of node, or "" if it
// may. Agents are held to their own stages; only people leave reviews.
func WaitReason(actor Actor, node *stages.Node, id int) string {
	switch actor.Kind {
	case ActorAgent:
		switch {
		case node.HumanReview():
			return fmt.Sprintf("%s is a human review: an agent cannot leave it; a person approves with `agenttree approve %d`", node.Path, id)
		case node.Controller():
			return fmt.Sprintf("%s is run by the host controller (`agenttree controller`); it moves the issue on when its checks pass", node.Path)
		case node.ParkingLot():
			return fmt.Sprintf("issue %d is parked in %s; a person starts it with `agenttree next -i %d`", id, node.Path, id)
		case node.Role() != actor.Role:
			return fmt.Sprintf("%s belongs to role %s, and this agent's role is %s (AGENTTREE_ROLE)", node.Path, node.Role(), actor.Role)
		}
	case ActorController:
		if !node.Controller() {
			return fmt.Sprintf("%s is not a controller stage; the controller leaves it alone", node.Path)
		}
	}
	return ""
}
