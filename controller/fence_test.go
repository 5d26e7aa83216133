package controller

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/engine"
)

// A controller whose term ended (Fence says no) starts nothing more: at
// the tick's start, or once the tick began, before the issue's pass and
// before a delivery. The message stays for the controller elected next.
func TestAControllerWhoseTermEndedActsNoMore(t *testing.T) {
	lost := errors.New("this controller's term ended")
	for name, allowed := range map[string]int64{"refused as the tick starts": 0, "refused before the issue's pass": 1, "refused before the delivery": 2} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			r := newRig(t, escalating)
			e := r.engine(t)
			iss, err := e.Create(ctx, engine.NewIssue{Title: "Fix it", Stage: "work"})
			require.NoError(t, err)
			_, err = e.Escalate(ctx, iss.ID, "error", "the forge failed 5 times")
			require.NoError(t, err)

			var asked atomic.Int64
			r.c.Fence = func(context.Context) error {
				if asked.Add(1) <= allowed {
					return nil
				}
				return lost
			}
			_, err = r.c.Tick(ctx)
			if allowed == 0 {
				require.ErrorIs(t, err, lost)
			} else {
				require.NoError(t, err)
			}
			events := filepath.Join(r.dir, "_agenttree", "events.txt")
			_, err = os.Stat(events)
			require.ErrorIs(t, err, os.ErrNotExist, "no one was told by a controller whose term ended")
			assert.Greater(t, asked.Load(), allowed, "the fence was asked again after the tick began")

			r.c.Fence = nil // elected again
			_, err = r.c.Tick(ctx)
			require.NoError(t, err)
			data, err := os.ReadFile(events)
			require.NoError(t, err)
			assert.Equal(t, "escalation|Fix it\n", string(data), "told once, by the controller that acts")
		})
	}
}
