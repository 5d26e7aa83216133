package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A message typed into a pane whose program ignores input (it shows
// nothing, takes nothing) stays in the outbox, visibly, after a bounded
// number of tries: never counted delivered.
func TestAMessageToAPaneThatIgnoresInputStaysVisible(t *testing.T) {
	r := newRig(t, "controller")
	id := r.create(t, "Add checkout page", "--stage", "implement.feedback")
	r.tmux.run(t, "new-session", "-d", "-s", agentSession(id), "-x", "200", "-y", "50", "sh", "-c", "stty -echo -icanon; exec sleep 600")

	res := r.run(t, humanEnv, "send", itoa(id), "please rename the form")
	require.Equal(t, exitOK, res.code, "stdout %s stderr %s", res.stdout, res.stderr)
	assert.Contains(t, res.stdout, "queued", "not taken: not reported delivered")
	for range 4 {
		r.run(t, humanEnv, "controller", "--once", "--issue", itoa(id))
	}
	inbox := r.run(t, humanEnv, "inbox", itoa(id))
	require.Equal(t, exitOK, inbox.code, inbox.stderr)
	assert.Contains(t, inbox.stdout, "1 undelivered")
	assert.Contains(t, inbox.stdout, "untaken, to the agent")
	assert.Contains(t, inbox.stdout, "never taken")
	pending, err := r.outbox(id).Pending()
	require.NoError(t, err)
	require.Len(t, pending, 1)
}
