package policy

import (
	"strconv"

	"github.com/agenttree/agenttree/engine/issues"
	"github.com/agenttree/agenttree/hooks"
	"github.com/agenttree/agenttree/stages"
)

// Changes reports whether outputs would change what iss holds.
func Changes(iss *issues.Issue, outputs map[string]string) bool {
	for k, v := range outputs {
		if iss.Outputs[k] != v {
			return true
		}
	}
	return false
}

// ApplyOutputs keeps hook outputs on the issue (an empty value removes
// one); the PR facts also fill the issue's own fields.
func ApplyOutputs(iss *issues.Issue, outputs map[string]string) {
	for k, v := range outputs {
		if v == "" {
			delete(iss.Outputs, k)
			continue
		}
		if iss.Outputs == nil {
			iss.Outputs = map[string]string{}
		}
		iss.Outputs[k] = v
		switch k {
		case "pr_number":
			if n, err := strconv.Atoi(v); err == nil {
				iss.PRNumber = n
			}
		case "pr_url":
			iss.PRURL = v
		case "head_sha":
			iss.HeadSHA = v
		}
	}
}

// Jumps reports whether the outcome sends the issue elsewhere.
func Jumps(o hooks.Outcome) bool {
	switch o.Kind {
	case hooks.KindRedirect, hooks.KindStepBack, hooks.KindRollback:
		return true
	}
	return false
}

// JumpKind is the move an outcome that jumps makes.
func JumpKind(k hooks.Kind) stages.Move {
	switch k {
	case hooks.KindStepBack:
		return stages.MoveStepBack
	case hooks.KindRollback:
		return stages.MoveRollback
	}
	return stages.MoveRedirect
}

// JumpReason is what the history says of a jump: a step back's message for
// the agent, else the hook's reason.
func JumpReason(o hooks.Outcome) string {
	if o.Kind == hooks.KindStepBack && o.Message != "" {
		return o.Message
	}
	return o.Reason
}
