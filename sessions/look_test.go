package sessions_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/sessions"
	"github.com/agenttree/agenttree/sessions/internal/sessionstest"
	"github.com/agenttree/agenttree/sessions/tmux"
)

// A tmux server that drops the question unanswered has told nothing of
// its sessions: Look asks again, and says it could not tell rather than
// report a live agent gone (which the keep-alive would restart).
func TestLookDoesNotTakeAnUnansweredQuestionForNoSessions(t *testing.T) {
	tests := []struct {
		name  string
		drops int
		want  sessions.PaneState
	}{
		{"answered when asked again", 2, sessions.PaneLive},
		{"never answered", -1, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newKeepRig(t, "live", 0)
			iss := r.Create("Watched", "work")
			_, err := r.M.Start(context.Background(), iss.ID, sessions.Options{})
			require.NoError(t, err)
			seen, err := r.M.Look(context.Background())
			require.NoError(t, err)
			require.Equal(t, sessions.PaneLive, seen[iss.ID].Pane)

			client := &tmux.Client{Socket: sessionstest.DroppingSocket(t, r.Tmux.Socket, tt.drops), LockDir: r.Tmux.LockDir}
			seen, err = sessions.New(r.E, client).Look(context.Background())
			if tt.want == "" {
				require.ErrorIs(t, err, tmux.ErrNoAnswer)
				assert.NotErrorIs(t, err, tmux.ErrNoSession, "not an answer that there is no session")
				assert.Nil(t, seen)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, seen[iss.ID].Pane)
		})
	}
}
