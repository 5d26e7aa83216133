package cmdutil

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/agenttree/agenttree/controller/api"
	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/internal/exitcode"
	"github.com/agenttree/agenttree/internal/identity"
	"github.com/agenttree/agenttree/internal/statedir"
	"github.com/agenttree/agenttree/sessions/tokens"
)

// StateDirOf is the state directory of the repository whose config is at
// path.
func StateDirOf(config string) string { return filepath.Join(filepath.Dir(config), "_agenttree") }

// Remote returns a client of the controller when this process is an agent
// by what the operating system says: another OS user than the state
// directory's owner, or another mount namespace than the state directory
// was set up in (a container). Such a process cannot write the state; its
// commands are requests. AGENTTREE_SOCKET (a container gets the socket
// mounted, nothing else of the state) makes any process ask: it can only
// lower authority. nil: this process is a person's (or an agent's in the
// same-user deployment, held by the engine's rules and caught by the
// tamper evidence) and acts on the store itself.
func (a *App) Remote() (*api.Client, error) { return once(&a.asks, a.findRemote) }

func (a *App) findRemote() (*api.Client, error) {
	token, err := a.token()
	if err != nil {
		return nil, err
	}
	if socket := a.Getenv("AGENTTREE_SOCKET"); socket != "" {
		return api.NewClient(socket, token), nil
	}
	stateDir, err := a.StateDir()
	if err != nil {
		return nil, err
	}
	if a.OSAgent(stateDir) == "" {
		return nil, nil
	}
	return api.NewClient(statedir.Layout{Root: stateDir}.Socket(), token), nil
}

// token is the session token this process holds, "" for none; a token
// file it cannot read is a usage error.
func (a *App) token() (string, error) {
	token, err := tokens.FromEnv(a.Getenv)
	if err != nil {
		return "", &ExitError{Code: exitcode.Usage, Err: err}
	}
	return token, nil
}

// StateDir is the state directory of the config this command uses.
func (a *App) StateDir() (string, error) {
	config, err := a.ConfigFile()
	if err != nil {
		return "", err
	}
	return StateDirOf(config), nil
}

// OSAgent says why the operating system makes this process an agent for
// stateDir, or "" when it is a person.
func (a *App) OSAgent(stateDir string) string {
	self := identity.Self(statedir.Layout{Root: stateDir}.HostNamespace())
	if self.Container {
		return "it runs in a container: " + self.Why
	}
	owner, err := identity.Owner(stateDir)
	if err != nil {
		return fmt.Sprintf("the owner of %s cannot be told (%v)", stateDir, err)
	}
	if self.Person(owner) {
		return ""
	}
	return fmt.Sprintf("its user (uid %d) is not the owner of %s (uid %d)", self.UID, stateDir, owner)
}

// agentWhy says why this process is an agent.
func (a *App) agentWhy() string {
	if a.Getenv("AGENTTREE_SOCKET") != "" {
		return "AGENTTREE_SOCKET is set"
	}
	stateDir, err := a.StateDir()
	if err != nil {
		return err.Error()
	}
	return a.OSAgent(stateDir)
}

// Ask sends an agent's request to the controller and prints the answer as
// the command would have.
func (a *App) Ask(ctx context.Context, c *api.Client, route string, req any) error {
	s := a.Spin("waiting for the controller's answer")
	out, err := c.Do(ctx, route, req)
	s.Stop()
	fmt.Fprint(a.Out, out.Text)
	var refused *api.Error
	switch {
	case errors.As(err, &refused):
		return &ExitError{Code: exitcode.Code(refused.ExitCode), Err: errors.New(refused.Message)}
	case err != nil:
		return err
	case out.ExitCode != int(exitcode.OK):
		return SilentExit(out.ExitCode)
	}
	return nil
}

// AskResult sends req to route, as Ask does, and decodes the answer into
// v for the command to print: the routes whose printer is the command's
// own (status).
func (a *App) AskResult(ctx context.Context, c *api.Client, route string, req, v any) error {
	s := a.Spin("waiting for the controller's answer")
	err := c.Result(ctx, route, req, v)
	s.Stop()
	if refused := (*api.Error)(nil); errors.As(err, &refused) {
		return &ExitError{Code: exitcode.Code(refused.ExitCode), Err: errors.New(refused.Message)}
	}
	return err
}

// Actor is who acts on issue id (0: none yet) in this process, which the
// operating system takes for a person: the environment may lower it to an
// agent, and a session token binds that agent to its issue and role, as
// the controller does for agents it answers.
func (a *App) Actor(e *engine.Engine, id int) (engine.Actor, error) {
	actor := engine.ActorFromEnv(a.Getenv)
	token, err := a.token()
	if err != nil || token == "" {
		return actor, err
	}
	sess, err := tokens.Open(e.Store.Root()).Lookup(token)
	if errors.Is(err, tokens.ErrUnknown) {
		return engine.Actor{}, &ExitError{Code: exitcode.Usage, Err: errors.New("the session token (AGENTTREE_TOKEN) is not one this repository gave, or it was revoked; a person makes one with `agenttree token ISSUE --role ROLE`")}
	}
	if err != nil {
		return engine.Actor{}, err
	}
	// The same check the controller makes of its peers: this process
	// must be of the session's pane. It holds agents of the person's
	// own user to their session; it cannot stop one that drops its
	// token (docs/SECURITY.md, the same-user deployment).
	if err := sess.Admits(os.Getpid()); err != nil {
		return engine.Actor{}, &ExitError{Code: exitcode.Usage, Err: err}
	}
	if id != 0 && id != sess.Issue {
		return engine.Actor{}, &ExitError{Code: exitcode.Waiting, Err: fmt.Errorf("this agent's session is for issue %d; issue %d is not its own", sess.Issue, id)}
	}
	return engine.Actor{Kind: engine.ActorAgent, Role: sess.Role}, nil
}

// ForPeople refuses a command to whoever the environment makes other than
// a person (the operating system's agents never get this far: a.Engine
// refuses them); why says what only people do.
func (a *App) ForPeople(why string, args ...any) error {
	if actor := engine.ActorFromEnv(a.Getenv); actor.Kind != engine.ActorHuman {
		return &ExitError{Code: exitcode.Waiting, Err: fmt.Errorf(why, append(args, actor)...)}
	}
	return nil
}

// EngineActing parses an issue id argument, opens the engine, and says
// who acts on that issue.
func (a *App) EngineActing(ctx context.Context, arg string) (*engine.Engine, int, engine.Actor, error) {
	e, id, err := a.EngineFor(ctx, arg)
	if err != nil {
		return nil, 0, engine.Actor{}, err
	}
	actor, err := a.Actor(e, id)
	return e, id, actor, err
}
