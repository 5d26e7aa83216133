package shell

import (
	"errors"
	"fmt"
	"os/exec"

	"github.com/agenttree/agenttree/internal/proc"
	"github.com/agenttree/agenttree/stages"
)

// HostUser is the OS user that runs the repository's code on this host
// (`run` commands, the local forge's CI) under the config's sandbox: ""
// for the host's own user (no sandbox, or `none`), NAME for `user:NAME`.
// That code comes from the agents' commits: run as the host's user, it
// would have the controller's authority over the state.
//
// A container sandbox is refused: the code belongs in the agents'
// containers, which agenttree does not run it in yet, and never on the
// host in their stead.
func HostUser(sb stages.Sandbox) (string, error) {
	switch sb.Kind {
	case "", stages.SandboxNone:
		return "", nil
	case stages.SandboxUser:
		return sb.Name, nil
	default:
		return "", fmt.Errorf("sandbox: %s: agenttree cannot run repository code (run gates, local CI) in a container yet, "+
			"and does not run it on the host instead, where the agents' commits would act with the controller's authority; "+
			"use sandbox: user:NAME, or a forge whose CI runs elsewhere (forge: github)", sb)
	}
}

// runAs makes cmd run as the OS user name (HostUser); "" leaves it the
// host's. Set cmd.Env first: the user's HOME, USER and LOGNAME replace
// the host's.
func runAs(cmd *exec.Cmd, name string) error {
	if name == "" {
		return nil
	}
	u, err := proc.LookupUser(name)
	if err != nil {
		return fmt.Errorf("sandbox: user:%s: %w; create the user or change the config's sandbox", name, err)
	}
	err = proc.AsUser(cmd, u)
	if errors.Is(err, proc.ErrNeedsRoot) {
		return fmt.Errorf("the controller must run as root to run repository code as %s (sandbox: user:%s): %w; "+
			"start the controller (or this command) as root", name, name, err)
	}
	return err
}
