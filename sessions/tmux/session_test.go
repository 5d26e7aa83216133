package tmux_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/agenttree/agenttree/sessions/tmux"
)

func TestSessionName(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"agenttree-agent-007", "agenttree-agent-007"},
		{"my.project-agent-7", "my-project-agent-7"},
		{"a:b.c", "a-b-c"},
		{"with space\tand\ncontrol", "with-space-and-control"},
		{"ünïcode-ok", "ünïcode-ok"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, tmux.SessionName(tt.in), tt.in)
	}
}

// tmux ends a command at an argument ending in ';': Arg keeps it whole.
func TestArg(t *testing.T) {
	for in, want := range map[string]string{"echo hi;": `echo hi\;`, "plain": "plain", "a;b": "a;b", "": ""} {
		assert.Equal(t, want, tmux.Arg(in), in)
	}
}
