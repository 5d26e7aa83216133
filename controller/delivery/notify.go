package delivery

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"time"

	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/engine/outbox"
	"github.com/agenttree/agenttree/hooks/shell"
	"github.com/agenttree/agenttree/internal/gitx"
	"github.com/agenttree/agenttree/internal/lines"
	"github.com/agenttree/agenttree/internal/proc"
	"github.com/agenttree/agenttree/sessions"
)

// notifyTimeout bounds one run of notify.command.
const notifyTimeout = 30 * time.Second

// event is what notify.command reads on stdin.
type event struct {
	Event   string    `json:"event"`
	Issue   int       `json:"issue"`
	Title   string    `json:"title"`
	Stage   string    `json:"stage"`
	Message string    `json:"message"`
	At      time.Time `json:"at"`
}

// notify runs the config's notify.command for a message to people: the
// event as JSON on stdin, and its placeholders as environment variables
// (as `run` does), so nothing in a title is ever code.
func notify(ctx context.Context, e *engine.Engine, iss *issues.Issue, m outbox.Message, command string) error {
	text, env, err := shell.Script(command, e.Snapshot(iss))
	if err != nil {
		return fmt.Errorf("notify.command %q: %w", command, err)
	}
	payload, err := json.Marshal(event{Event: m.Kind, Issue: iss.ID, Title: iss.Title, Stage: iss.Stage, Message: m.Text, At: m.Created})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, notifyTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", text)
	cmd.Dir = e.WorkDir
	// {{project}} and {{role}} are the controller's, beside the issue's own.
	cmd.Env = append(append(gitx.Environ(), env...),
		"AGENTTREE_VAR_PROJECT="+e.Config.ProjectName(), "AGENTTREE_VAR_ROLE="+string(sessions.AgentRole(e.Config, iss)),
		"AGENTTREE_EVENT="+m.Kind, "AGENTTREE_MESSAGE="+m.Text)
	cmd.Stdin = bytes.NewReader(payload)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	proc.Group(cmd)
	cmd.WaitDelay = time.Second
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("notify.command %q: %w: %s", command, err, lines.Tail(out.String(), 3))
	}
	return nil
}
