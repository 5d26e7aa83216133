package engine_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/engine"
	"github.com/agenttree/agenttree/hooks"
)

// The controller's pass wrote a step back and was killed before it queued
// the step back's message; the agent, back at its stage, moves the issue
// on before a controller looks, and a controller queues only what the
// latest history entry says. The next write queues the messages of the
// last entry that has any again (a key already in the box adds nothing):
// the message is late, never lost, even when the write after the step
// back was killed before it queued too. Found by cmd/agenttree
// TestCrashStorm.
func TestAStepBacksMessageLostToAKillIsQueuedByTheNextWrite(t *testing.T) {
	for _, tt := range []struct {
		name string
		// alsoLost: the agent's next was killed before it queued too, and
		// the controller's pass after it writes next.
		alsoLost bool
	}{
		{name: "the agent's next"},
		{name: "the controller's pass after a next killed too", alsoLost: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := &script{ci: []hooks.Outcome{ciFailed("aaa", "lint"), hooks.Pass()}}
			e := engineWith(t, controlled, s.registry())
			iss := create(t, e, "implement.feedback", nil)
			require.Equal(t, "pr_ready", next(t, e, iss.ID, agent).To)
			require.Equal(t, engine.StatusSteppedBack, reconcile(t, e, iss.ID).Status)
			// The kill: what the write queued is not there.
			lose := func() {
				t.Helper()
				queued, err := filepath.Glob(filepath.Join(e.Outbox(iss.ID).Dir(), "*.json"))
				require.NoError(t, err)
				for _, f := range queued {
					require.NoError(t, os.Remove(f))
				}
			}
			lose()
			require.Equal(t, "pr_ready", next(t, e, iss.ID, agent).To)
			if tt.alsoLost {
				lose()
				require.Equal(t, "review", reconcile(t, e, iss.ID).To)
			}

			box, err := e.Outbox(iss.ID).Recent(0)
			require.NoError(t, err)
			var texts []string
			for _, m := range box {
				texts = append(texts, m.Text)
			}
			require.NotEmpty(t, texts, "the step back's message is queued")
			assert.Contains(t, texts[0], "pr_ready → implement.feedback", "%q", texts)
		})
	}
}
