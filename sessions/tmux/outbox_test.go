package tmux_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/engine/outbox"
	"github.com/agenttree/agenttree/sessions/tmux"
)

// A message for a session that is not there yet waits in the outbox and
// arrives, once, when the session appears; a delivery whose outcome was
// not known is found in the pane and not typed again.
func TestOutboxDeliversThroughTmux(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := newServer(t)
	box := outbox.Open(filepath.Join(t.TempDir(), "outbox"))
	const session = "agenttree-agent-007"

	typed := func(m outbox.Message) string { return outbox.Marker(m) + " " + m.Text }
	send := func(ctx context.Context, m outbox.Message) error {
		err := c.Send(ctx, session, typed(m))
		if errors.Is(err, tmux.ErrNotConfirmed) {
			return fmt.Errorf("%w: %w", outbox.ErrMaybeDelivered, err)
		}
		return err
	}
	seen := func(ctx context.Context, m outbox.Message) (string, bool, error) {
		shown, err := c.Capture(ctx, session, 500)
		return "", strings.Contains(shown, outbox.Marker(m)), err
	}

	first, err := box.Put(ctx, outbox.Message{Kind: "step_back", Text: "CI failed: test-unit"})
	require.NoError(t, err)
	_, err = box.Deliver(ctx, send, seen)
	require.ErrorIs(t, err, tmux.ErrNoSession)
	pending, err := box.Pending()
	require.NoError(t, err)
	require.Len(t, pending, 1)
	assert.Equal(t, outbox.Pending, pending[0].State)

	_, file := reader(t, c, session, catToFile)
	delivered, err := box.Deliver(ctx, send, seen)
	require.NoError(t, err)
	require.Len(t, delivered, 1)
	received(t, file, typed(first)+"\n")

	// Typed, but agenttree could not tell: the pane shows it, so the next
	// delivery marks it sent without typing it again.
	second, err := box.Put(ctx, outbox.Message{Kind: "message", Text: "run `agenttree next` when fixed"})
	require.NoError(t, err)
	_, err = box.Deliver(ctx, func(ctx context.Context, m outbox.Message) error {
		require.NoError(t, c.Send(ctx, session, typed(m)))
		return outbox.ErrMaybeDelivered
	}, seen)
	require.ErrorIs(t, err, outbox.ErrMaybeDelivered)
	delivered, err = box.Deliver(ctx, send, seen)
	require.NoError(t, err)
	require.Len(t, delivered, 1)
	assert.Equal(t, outbox.Sent, delivered[0].State)
	received(t, file, typed(first)+"\n"+typed(second)+"\n")
}
