// Package message holds send_message, the hook that leaves a message for
// the issue's agent. In an on_failure list it tells the agent what failed
// before the issue steps back:
//
//	on_failure: [{send_message: "CI failed: {{failure_reason}}"}, {step_back_to: implement.code}]
//
// The hook only says what to send; the engine puts it in the issue's
// outbox, and the controller delivers it.
package message

import (
	"context"
	"fmt"
	"strings"

	"github.com/agenttree/agenttree/hooks"
	"github.com/agenttree/agenttree/stages"
)

var textParam = hooks.Template("text",
	"the message, with {{placeholders}}: the issue's variables and the outputs of the hooks so far, such as {{failure_reason}}").Required()

// Defs are the hooks that send messages.
func Defs() []hooks.Def {
	return []hooks.Def{
		{HookSpec: stages.HookSpec{Name: "send_message", Main: "text", Params: hooks.Specs(textParam),
			Doc:     "Leaves a message for the issue's agent, delivered into its tmux session by the controller.",
			Example: "- send_message: \"Stepped back: {{failure_reason}}. Fix it, then run agenttree next.\""}, Run: send},
	}
}

// send renders the message. One that comes out blank (every placeholder
// empty) is not worth an agent's attention: nothing is sent, and a
// warning says so, without failing what the message was about.
func send(_ context.Context, c *hooks.Call) hooks.Outcome {
	o := hooks.Pass()
	tmpl := textParam.Get(c)
	text := strings.TrimSpace(stages.Render(tmpl, c.Issue.MessageVars()))
	if text == "" {
		o.Warnings = []string{fmt.Sprintf("send_message: %q is empty once its placeholders are filled; nothing was sent", tmpl)}
		return o
	}
	o.Send = []string{text}
	return o
}
