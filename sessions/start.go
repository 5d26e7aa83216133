package sessions

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/engine/outbox"
	"github.com/agenttree/agenttree/internal/codeenv"
	"github.com/agenttree/agenttree/internal/gitx"
	"github.com/agenttree/agenttree/sessions/sandbox"
	"github.com/agenttree/agenttree/sessions/tmux"
	"github.com/agenttree/agenttree/sessions/tokens"
	"github.com/agenttree/agenttree/stages"
)

// Options choose what Start starts.
type Options struct {
	// Role is the agent's role; empty: the issue's (AgentRole).
	Role stages.Role
	// Agent names the agent; empty: the role's first.
	Agent string
	// Restart replaces a live session; without it a live session is
	// left as it is and reported.
	Restart bool
}

// State is what Start did.
type State string

const (
	Started   State = "started"
	Restarted State = "restarted"
	// Running: the session was live already and is left alone.
	Running State = "running"
)

// Start is what Start did: the session's record and, when the agent was
// given its stage's instructions, the message in the issue's outbox.
type Start struct {
	State   State   `json:"state"`
	Session *Record `json:"session"`
	// Message is the id of the first message, queued in the outbox;
	// empty when the issue is at another role's stage.
	Message string `json:"message,omitempty"`
}

// Start gives issue id an agent session: a worktree on its branch, a tmux
// session named as the notifier names it running the agent, with
// AGENTTREE_ISSUE and AGENTTREE_ROLE in its environment and a new
// session token in a file only the agent's user reads
// (AGENTTREE_TOKEN_FILE), bound to its pane, and the stage's instructions
// queued as its first message. A live session is reported, not touched,
// unless opts.Restart. What a failed start made is undone: no worktree,
// session, token or record is left of it.
func (m *Manager) Start(ctx context.Context, id int, opts Options) (*Start, error) {
	iss, err := m.Engine.Store.Get(id)
	if err != nil {
		return nil, err
	}
	role, agent, err := m.choose(iss, opts)
	if err != nil {
		return nil, err
	}
	name := Name(m.cfg(), iss, role)
	live, err := m.Tmux.HasSession(ctx, name)
	if err != nil {
		return nil, err
	}
	state := Started
	if live {
		if !opts.Restart {
			rec, _ := m.records().Get(id)
			return &Start{State: Running, Session: rec}, nil
		}
		state = Restarted
	}
	// Every check that can fail without making anything comes first.
	l, err := m.plan(ctx, agent.Command, id, name)
	if err != nil {
		return nil, fmt.Errorf("issue %d, agent %s: %w", id, agent.Name, err)
	}
	if live {
		if err := m.End(ctx, id, name); err != nil {
			return nil, err
		}
	}
	// An issue made on another host (state.nodes) has no stage
	// documents' directory here yet, where its agent writes them.
	if err := m.Engine.Store.MkdirDocs(id); err != nil {
		return nil, fmt.Errorf("issue %d: make its documents' directory: %w", id, err)
	}
	rec := &Record{Issue: id, Role: role, Agent: agent.Name, Session: name, Socket: m.Tmux.Socket, Branch: iss.Branch,
		Sandbox: m.cfg().Sandbox.String(), Started: time.Now().UTC()}
	msg, err := m.launch(ctx, iss, rec, l, "")
	if err != nil {
		return nil, err
	}
	return &Start{State: state, Session: rec, Message: msg}, nil
}

// choose is the role and agent opts ask for on iss, or why there is none.
func (m *Manager) choose(iss *issues.Issue, opts Options) (stages.Role, *stages.Agent, error) {
	cfg := m.cfg()
	node, ok := cfg.Node(iss.Stage)
	switch {
	case ok && node.Terminal() != stages.TerminalNone:
		return "", nil, fmt.Errorf("issue %d is at %s, where it ends: %w; no agent works on it", iss.ID, iss.Stage, ErrFinished)
	case ok && node.ParkingLot() && opts.Role == "":
		return "", nil, fmt.Errorf("%w: issue %d is parked at %s, where no agent can move it; a person starts it (`agenttree next -i %d`), then `agenttree start %d`",
			ErrNotYet, iss.ID, iss.Stage, iss.ID, iss.ID)
	case ok && node.Controller() && opts.Role == "":
		return "", nil, fmt.Errorf("%w: issue %d is at %s, which the controller works on; its agent is needed again only if work comes back (`agenttree start %d` then, or roles' auto_start), or name the role (`--role`) to start one now",
			ErrNotYet, iss.ID, iss.Stage, iss.ID)
	}
	role := opts.Role
	if role == "" {
		role = AgentRole(cfg, iss)
	}
	if !role.Agent() {
		return "", nil, fmt.Errorf("%w: %q is not an agent's role", ErrNoAgent, role)
	}
	rs, ok := cfg.Sessions(role)
	name := opts.Agent
	switch {
	case name != "":
	case !ok:
		return "", nil, fmt.Errorf("%w: role %s has no entry under `roles:` in %s; add one, e.g. `roles: {%s: {agents: [NAME]}}`, or pass --agent",
			ErrNoAgent, role, cfg.File, role)
	case len(rs.Agents) == 0:
		return "", nil, fmt.Errorf("%w: role %s lists no agents (roles.%s.agents in %s); list one, or pass --agent", ErrNoAgent, role, role, cfg.File)
	default:
		name = rs.Agents[0]
	}
	agent, ok := cfg.Agent(name)
	if !ok {
		hint := "declare it under `agents:`"
		if best := stages.Closest(name, cfg.AgentNames()); best != "" {
			hint = "did you mean " + best + "?"
		}
		return "", nil, fmt.Errorf("%w: unknown agent %q (%s; known: %v)", ErrNoAgent, name, hint, cfg.AgentNames())
	}
	return role, agent, nil
}

// launch makes the worktree, the token and the session, records them,
// and queues the first message, opening with note when there is one,
// undoing all of it when a step fails.
func (m *Manager) launch(ctx context.Context, iss *issues.Issue, rec *Record, l *sandbox.Launch, note string) (msg string, err error) {
	var undo []func() error
	defer func() {
		if err == nil {
			return
		}
		// Undone even when ctx is what stopped the start.
		for i := len(undo) - 1; i >= 0; i-- {
			if uerr := undo[i](); uerr != nil {
				m.log().Warn("undoing a failed start", "issue", iss.ID, "err", uerr)
			}
		}
	}()
	cleanup := context.WithoutCancel(ctx)

	var wt *worktree
	switch {
	case l.User != nil:
		wt, err = m.agentClone(ctx, iss, l.User)
	case l.InContainer():
		wt, err = m.containerClone(ctx, iss)
	default:
		wt, err = m.worktree(ctx, iss)
	}
	if err != nil {
		return "", err
	}
	undo = append(undo, func() error { return wt.undo(cleanup, iss.Branch) })
	rec.Worktree, rec.Clone = wt.path, wt.clone
	if l.User != nil {
		layout := m.Engine.Store.Layout()
		if err := handDocs(layout.Docs(iss.ID), func() error { return layout.MkdirDocs(iss.ID) }, l.User); err != nil {
			return "", err
		}
	}
	if err := l.At(wt.path); err != nil {
		return "", err
	}

	token, err := m.tokens().Mint(iss.ID, rec.Role)
	if err != nil {
		return "", fmt.Errorf("mint a session token for issue %d: %w", iss.ID, err)
	}
	rec.TokenHash = tokens.Hash(token)
	undo = append(undo, func() error { return m.revoke(iss.ID, rec.TokenHash) })
	tokenFile := m.Engine.Store.Layout().AgentToken(iss.ID)
	if err := handOver(tokenFile, token, l.User); err != nil {
		return "", err
	}

	// The token is in no argv (the tmux server that this command may
	// start keeps its own for good, for every user's ps) and in no
	// environment (readable in /proc by every process of the agent's
	// user): the agent reads it from a file only its user may read.
	l.Env = append(l.Env, "AGENTTREE_ISSUE="+strconv.Itoa(iss.ID), "AGENTTREE_ROLE="+string(rec.Role))
	if !l.InContainer() {
		l.Env = append(l.Env, tokens.TokenFileEnv+"="+tokenFile)
	}
	if wt.clone && !l.InContainer() {
		// The clone holds no state directory: the agent's commands ask
		// the controller, at its socket (a container's is in its argv).
		l.Env = append(l.Env, "AGENTTREE_SOCKET="+m.Engine.Store.Layout().Socket())
	}
	if l.User != nil {
		// The pane's process would get the tmux server's environment
		// (whoever started it: the person's credentials) and what tmux
		// copies from the client (SSH_AUTH_SOCK): the agent of another
		// user gets the allowlist agents' code gets, and its own values.
		term, _ := m.Tmux.Run(ctx, "show-options", "-gv", "default-terminal")
		l.OnlyEnv(codeenv.Environ(os.Environ(), nil, append(slices.Clone(l.Env), "TERM="+cmp.Or(strings.TrimSpace(term), "screen"))))
	}
	if rec.Pane, rec.PanePID, err = m.newSession(ctx, rec.Session, wt.path, l); err != nil {
		return "", err
	}
	// The token acts only for processes of this pane (docs/SECURITY.md).
	if err := m.tokens().Bind(rec.TokenHash, rec.PanePID, l.InContainer()); err != nil {
		return "", err
	}
	undo = append(undo, func() error { return m.Tmux.KillSession(cleanup, rec.Session) })

	if err := m.records().Put(rec); err != nil {
		return "", err
	}
	undo = append(undo, func() error { return m.records().Remove(iss.ID) })
	return m.queueFirst(ctx, iss, rec, note)
}

// queueFirst puts the stage's instructions in the issue's outbox, for
// the controller's confirmed delivery, when the issue is at a stage of
// the session's role; a session started ahead of its stage is told when
// the issue gets there. Its key is the launch's: a start retried after a
// crash queues it once, and every launch (two may begin within a second)
// its own.
func (m *Manager) queueFirst(ctx context.Context, iss *issues.Issue, rec *Record, note string) (string, error) {
	if AgentRole(m.cfg(), iss) != rec.Role {
		return "", nil
	}
	msg, err := m.Engine.Outbox(iss.ID).Put(ctx, outbox.Message{
		Key: "session-" + rec.Started.Format(time.RFC3339Nano), To: outbox.ToAgent, Kind: "start", Text: m.welcome(iss, rec, note)})
	if err != nil {
		return "", fmt.Errorf("queue the first message of issue %d: %w", iss.ID, err)
	}
	return msg.ID, nil
}

// End ends session name of issue id, removes its container and revokes
// its token, keeping its worktree and record. A session already gone is
// no error.
func (m *Manager) End(ctx context.Context, id int, name string) error {
	if err := m.Tmux.KillSession(ctx, name); err != nil && !errors.Is(err, tmux.ErrNoSession) {
		return err
	}
	rec, err := m.records().Get(id)
	if errors.Is(err, ErrNoSession) {
		return nil
	}
	if err != nil {
		return err
	}
	sandbox.RemoveContainer(ctx, rec.Sandbox, rec.Session)
	return m.revoke(id, rec.TokenHash)
}

// revoke revokes issue id's session token, by its hash (none: "") and
// removes the file that handed it over.
func (m *Manager) revoke(id int, hash string) error {
	if err := os.Remove(m.Engine.Store.Layout().AgentToken(id)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if hash == "" {
		return nil
	}
	return m.tokens().RevokeHash(hash)
}

// tokens are the session tokens of the state directory.
func (m *Manager) tokens() *tokens.Store { return tokens.Open(m.Engine.Store.Root()) }

// plan is how agent's command runs for issue id in tmux session
// session, in the configured sandbox, or why it cannot.
func (m *Manager) plan(ctx context.Context, command string, id int, session string) (*sandbox.Launch, error) {
	layout := m.Engine.Store.Layout()
	mounts := sandbox.Mounts{Issue: id, Docs: layout.Docs(id), Socket: layout.Socket(), Token: layout.AgentToken(id)}
	if _, ok := sandbox.ContainerOf(m.cfg().Sandbox.String()); ok {
		// The origin of the agent's clone.
		gitDir, err := (&gitx.Repo{Dir: m.Repo}).Run(ctx, "rev-parse", "--path-format=absolute", "--git-common-dir")
		if err != nil {
			return nil, fmt.Errorf("find the git directory of %s, which the agent's container gets read-only: %w", m.Repo, err)
		}
		mounts.Origin = gitDir
	}
	return sandbox.Plan(ctx, m.cfg().Sandbox, command, session, mounts)
}
