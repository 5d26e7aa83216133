package main

import (
	"os/exec"
	"testing"

	"github.com/stretchr/testify/assert"
)

// `agenttree demo --fast` plays the whole story, as the README's first
// command does, and fails if any step of it did not happen.
func TestDemo(t *testing.T) {
	for _, tool := range []string{"git", "tmux"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("the demo needs %s", tool)
		}
	}
	out, err := exec.Command(binary, "demo", "--fast", "--timeout", "60s").CombinedOutput()
	assert.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), "every step of the story happened")
	assert.Contains(t, string(out), "typed into the agent's pane")
	assert.Regexp(t, `the controller asked the forge [1-9][0-9]* times`, string(out), "it counts what GitHub would have been sent")
	// A CI failure fixed, then a colleague's conflict, is progress: the
	// manager is told of the review, not warned of a breaker.
	assert.Contains(t, string(out), "typed into the manager's pane")
	assert.NotContains(t, string(out), "circuit breaker", "the normal story warns no one")
}
