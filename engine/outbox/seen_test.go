package outbox_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenttree/agenttree/engine/outbox"
)

// A message whose delivery was cut short before it was recorded typed,
// and which Seen then finds in the pane, is recorded typed where it was
// seen: when its Enter is not confirmed either, its next hand-over goes
// to that pane only, never to one that replaced it (a tmux server
// killed, docs/RELIABILITY.md).
func TestAMessageSeenIsHandedOverWhereItWasSeen(t *testing.T) {
	b := outbox.Open(filepath.Join(t.TempDir(), "issues", "007", "outbox"))
	put(t, b, "CI failed")
	_, err := b.Carry(context.Background(), outbox.Courier{
		Send: func(context.Context, outbox.Message, func(string) error) error { return outbox.ErrMaybeDelivered },
	})
	require.Error(t, err)
	pending, err := b.Pending()
	require.NoError(t, err)
	require.Equal(t, outbox.Delivering, pending[0].State)

	var intos []string
	c := outbox.Courier{
		Send: func(context.Context, outbox.Message, func(string) error) error {
			t.Fatal("typed again")
			return nil
		},
		Seen: func(context.Context, outbox.Message) (string, bool, error) { return "pane %3", true, nil },
		Submit: func(_ context.Context, m outbox.Message) error {
			intos = append(intos, m.TypedInto)
			return errors.New("the pane did not change after Enter")
		},
	}
	_, err = b.Carry(context.Background(), c)
	require.Error(t, err)
	pending, err = b.Pending()
	require.NoError(t, err)
	assert.Equal(t, outbox.Typed, pending[0].State)
	assert.Equal(t, "pane %3", pending[0].TypedInto, "recorded where it was seen")
	_, _ = b.Carry(context.Background(), c)
	assert.Equal(t, []string{"pane %3", "pane %3"}, intos, "each hand-over to the pane it was seen in")
}
